"builtin.module"() ({
  "test.op"() {a = dense<1> : tensor<4xi32>, b = dense<-1> : tensor<2x2xi8>, c = dense<0> : tensor<i64>, d = dense<255> : tensor<3xui8>, e = dense<7> : vector<4xi16>, f = dense<3> : tensor<2xindex>, g = dense<1> : tensor<2xi4>, h = dense<-1> : tensor<2xsi4>} : () -> ()
}) : () -> ()
