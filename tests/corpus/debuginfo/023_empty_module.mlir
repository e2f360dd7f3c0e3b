"builtin.module"() ({
^bb0:
}) : () -> () loc(#loc)
#loc = loc("-":0:0)
