"""(in progress)"""


def register():
    pass


def unregister():
    pass
