"builtin.module"() <{sym_name = "jit__while_collatz"}> ({
  "func.func"() <{function_type = (tensor<i32>) -> tensor<i32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<i32>):
    %29 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %30:2 = "stablehlo.while"(%arg7, %29) ({
    ^bb0(%arg10: tensor<i32>, %arg11: tensor<i32>):
      %44 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %45 = "stablehlo.compare"(%arg10, %44) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%45) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<i32>, %arg9: tensor<i32>):
      %31 = "stablehlo.constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
      %32 = "func.call"(%arg8, %31) <{callee = @remainder}> : (tensor<i32>, tensor<i64>) -> tensor<i32>
      %33 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %34 = "stablehlo.compare"(%32, %33) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %35 = "stablehlo.constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
      %36 = "func.call"(%arg8, %35) <{callee = @floor_divide}> : (tensor<i32>, tensor<i64>) -> tensor<i32>
      %37 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %38 = "stablehlo.multiply"(%37, %arg8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %39 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %40 = "stablehlo.add"(%38, %39) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %41 = "func.call"(%34, %36, %40) <{callee = @_where}> : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %42 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %43 = "stablehlo.add"(%arg9, %42) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%41, %43) : (tensor<i32>, tensor<i32>) -> ()
    }) : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
    "func.return"(%30#1) : (tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i64>) -> tensor<i32>, sym_name = "remainder", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<i32>, %arg6: tensor<i64>):
    %13 = "stablehlo.convert"(%arg6) : (tensor<i64>) -> tensor<i32>
    %14 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %15 = "stablehlo.compare"(%13, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %16 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %17 = "func.call"(%15, %16, %13) <{callee = @_where}> : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %18 = "stablehlo.remainder"(%arg5, %17) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %19 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %20 = "stablehlo.compare"(%18, %19) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %21 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %22 = "stablehlo.compare"(%18, %21) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %23 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.compare"(%17, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %25 = "stablehlo.compare"(%22, %24) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %26 = "stablehlo.and"(%25, %20) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %27 = "stablehlo.add"(%18, %17) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %28 = "stablehlo.select"(%26, %27, %18) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%28) : (tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<i1>, %arg3: tensor<i32>, %arg4: tensor<i32>):
    %12 = "stablehlo.select"(%arg2, %arg3, %arg4) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%12) : (tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<i32>, tensor<i64>) -> tensor<i32>, sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<i64>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<i64>) -> tensor<i32>
    %1 = "stablehlo.divide"(%arg0, %0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.sign"(%arg0) : (tensor<i32>) -> tensor<i32>
    %3 = "stablehlo.sign"(%0) : (tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %5 = "stablehlo.remainder"(%arg0, %0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.compare"(%5, %6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %8 = "stablehlo.and"(%4, %7) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %9 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.subtract"(%1, %9) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %11 = "func.call"(%8, %10, %1) <{callee = @_where}> : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "func.return"(%11) : (tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
