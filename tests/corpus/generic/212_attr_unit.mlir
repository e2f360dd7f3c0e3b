"builtin.module"() ({
  "test.op"() {arr = [unit, unit], dict = {u}, flag, other} : () -> ()
}) : () -> ()
