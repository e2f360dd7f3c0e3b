"builtin.module"() <{sym_name = "m", sym_visibility = "private"}> ({
^bb0:
}) : () -> ()
