"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "mixed"}> ({
  ^bb0(%arg0: i32):
    %0 = "test.opaque"(%arg0) {note = "unregistered op in a registered function"} : (i32) -> i32
    %1 = "arith.addi"(%0, %arg0) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "test.region_op"(%1) ({
    ^bb0(%arg1: i32):
      %2 = "arith.muli"(%arg1, %arg1) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
      "test.yield"(%2) : (i32) -> ()
    }) : (i32) -> ()
    "func.return"(%1) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
