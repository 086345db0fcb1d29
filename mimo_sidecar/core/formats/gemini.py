def render(turns, ctx):
    raise NotImplementedError
