"builtin.module"() <{sym_name = "named"}> ({
^bb0:
}) {my.flag, my.value = 3 : i32} : () -> ()
