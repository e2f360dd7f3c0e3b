"builtin.module"() ({
  "func.func"() <{function_type = (i32, i32, f64, f64) -> (i1, i1, i32), sym_name = "cmp"}> ({
  ^bb0(%arg0: i32, %arg1: i32, %arg2: f64, %arg3: f64):
    %0 = "arith.cmpi"(%arg0, %arg1) <{predicate = 2 : i64}> : (i32, i32) -> i1
    %1 = "arith.cmpi"(%arg0, %arg1) <{predicate = 9 : i64}> : (i32, i32) -> i1
    %2 = "arith.cmpf"(%arg2, %arg3) <{fastmath = #arith.fastmath<none>, predicate = 4 : i64}> : (f64, f64) -> i1
    %3 = "arith.cmpf"(%arg2, %arg3) <{fastmath = #arith.fastmath<none>, predicate = 13 : i64}> : (f64, f64) -> i1
    %4 = "arith.select"(%0, %arg0, %arg1) : (i1, i32, i32) -> i32
    %5 = "arith.andi"(%1, %2) : (i1, i1) -> i1
    %6 = "arith.ori"(%5, %3) : (i1, i1) -> i1
    "func.return"(%6, %0, %4) : (i1, i1, i32) -> ()
  }) : () -> ()
}) : () -> ()
