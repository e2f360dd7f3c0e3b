"builtin.module"() ({
  "func.func"() <{function_type = () -> (i32, f32, i1), sym_name = "folded"}> ({
    %0 = "arith.constant"() <{value = 2 : i32}> : () -> i32
    %1 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %2 = "arith.muli"(%0, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.addi"(%2, %2) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %4 = "arith.sitofp"(%3) : (i32) -> f32
    %5 = "arith.cmpi"(%3, %1) <{predicate = 4 : i64}> : (i32, i32) -> i1
    "func.return"(%3, %4, %5) : (i32, f32, i1) -> ()
  }) : () -> ()
}) : () -> ()
