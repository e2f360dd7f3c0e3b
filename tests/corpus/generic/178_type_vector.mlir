"builtin.module"() ({
  %0:7 = "test.op"() : () -> (vector<4xf32>, vector<2x3xi8>, vector<[4]xf32>, vector<2x[8]xi1>, vector<f32>, vector<1x2x3xindex>, vector<[2]x[2]xbf16>)
}) : () -> ()
