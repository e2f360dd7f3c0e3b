module {
  func.func @cmpi_shaped(%arg0: vector<4xindex>, %arg1: vector<4xindex>) -> (vector<4xi1>, vector<4xi1>, vector<4xi1>) {
    %0 = arith.cmpi eq, %arg0, %arg1 : vector<4xindex>
    %1 = arith.cmpi ult, %arg0, %arg1 : vector<4xindex>
    %2 = arith.cmpi sge, %arg0, %arg1 : vector<4xindex>
    return %0, %1, %2 : vector<4xi1>, vector<4xi1>, vector<4xi1>
  }
}
