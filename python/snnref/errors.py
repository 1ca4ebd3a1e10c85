"""The one exception type of snnref: a message that names the file or op,
says what is wrong and what to do."""


class RefError(Exception):
    pass
