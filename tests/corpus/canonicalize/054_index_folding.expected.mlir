"builtin.module"() ({
  "func.func"() <{function_type = (index) -> (index, index, index, i1), sym_name = "index"}> ({
  ^bb0(%arg0: index):
    %0 = "arith.constant"() <{value = true}> : () -> i1
    %1 = "arith.constant"() <{value = 32 : index}> : () -> index
    %2 = "arith.constant"() <{value = 2 : index}> : () -> index
    %3 = "arith.addi"(%arg0, %1) <{overflowFlags = #arith.overflow<none>}> : (index, index) -> index
    "func.return"(%1, %2, %3, %0) : (index, index, index, i1) -> ()
  }) : () -> ()
}) : () -> ()
