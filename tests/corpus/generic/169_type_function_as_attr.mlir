"builtin.module"() ({
  "test.op"() {a = () -> (), b = (i32) -> i64, c = (i32) -> i64, d = (i1, i2) -> (i3, i4), e = () -> ((i32) -> i32), f = ((i1) -> i1) -> (), g = (tuple<>) -> tuple<i1, index>} : () -> ()
}) : () -> ()
