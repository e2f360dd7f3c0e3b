"builtin.module"() ({
  "func.func"() <{function_type = (i32, f32) -> i32, sym_name = "dead"}> ({
  ^bb0(%arg0: i32, %arg1: f32):
    %0 = "arith.constant"() <{value = 1 : i32}> : () -> i32
    %1 = "arith.addi"(%arg0, %0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %2 = "arith.muli"(%1, %1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %3 = "arith.cmpi"(%2, %arg0) <{predicate = 2 : i64}> : (i32, i32) -> i1
    "func.return"(%arg0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
