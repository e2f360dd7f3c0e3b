"builtin.module"() ({
  "test.op"() {"0digit" = 3 : i64, a = {b = {d = {f}, e = []}, c = 1 : i64}, k.with.dots = 2 : i64, "quoted key" = 1 : i64, "sp ace" = {"in ner" = 5 : i64}, z = {}} : () -> ()
}) : () -> ()
