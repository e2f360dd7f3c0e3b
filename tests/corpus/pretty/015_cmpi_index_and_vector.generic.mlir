"builtin.module"() ({
  "func.func"() <{function_type = (vector<4xindex>, vector<4xindex>) -> (vector<4xi1>, vector<4xi1>, vector<4xi1>), sym_name = "cmpi_shaped"}> ({
  ^bb0(%arg0: vector<4xindex>, %arg1: vector<4xindex>):
    %0 = "arith.cmpi"(%arg0, %arg1) <{predicate = 0 : i64}> : (vector<4xindex>, vector<4xindex>) -> vector<4xi1>
    %1 = "arith.cmpi"(%arg0, %arg1) <{predicate = 6 : i64}> : (vector<4xindex>, vector<4xindex>) -> vector<4xi1>
    %2 = "arith.cmpi"(%arg0, %arg1) <{predicate = 5 : i64}> : (vector<4xindex>, vector<4xindex>) -> vector<4xi1>
    "func.return"(%0, %1, %2) : (vector<4xi1>, vector<4xi1>, vector<4xi1>) -> ()
  }) : () -> ()
}) : () -> ()
