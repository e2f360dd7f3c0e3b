#set = affine_set<(d0) : (d0 - 2 >= 0)>
#set1 = affine_set<(d0, d1)[s0] : (d0 - s0 == 0, d1 >= 0)>
#set2 = affine_set<() : (0 == 0)>
"builtin.module"() ({
  "test.op"() {a = #set, b = #set1, c = #set2} : () -> ()
}) : () -> ()
