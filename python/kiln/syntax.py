"""@kl.syntax (Dr.Jit's @dr.syntax): a function whose `while` loops and `if` statements may
test Kiln arrays, rewritten so that those become kl.while_loop / kl.if_stmt.

    @kl.syntax
    def f(x):
        i = kl.UInt32(0)
        while i < 10:          # a kl.Bool: one symbolic (or evaluated) loop
            x = x * 2.0
            i += 1
        return x

The decorator reads the function's source, turns each `while` and `if` into a call of
run_while / run_if below with the statement's body as local functions, and compiles it in
the function's globals. At run time a condition that is a Python value keeps Python's
meaning (an ordinary loop or branch); a kl.Bool makes the loop state (or the branch
results) the local variables the statement reads or assigns that hold Kiln values (arrays,
vectors, tensors, PCG32, and nestings of them). Statements containing `break`,
`continue`, `return` or `yield` are left as Python wrote them, and so need Python
conditions. @kl.syntax must be the innermost decorator."""

import ast
import functools
import inspect
import sys
import textwrap

from ._kiln import PCG32, Bool
from .control import if_stmt, while_loop
from .tree import flatten

_RUNTIME = "_kiln_syntax_runtime"


class _Unset:
    """The value of a variable that is not defined before the statement."""

    def __repr__(self):
        return "<not defined before the kl.syntax statement>"


UNSET = _Unset()


def lookup(scope, names):
    """The values of `names` in the local `scope` (UNSET where undefined)."""
    return tuple(scope.get(name, UNSET) for name in names)


def _is_state(value):
    """Whether `value` can be loop state: Kiln values and nestings of them."""
    if value is UNSET or isinstance(value, (bool, int, float, str)) or value is None:
        return False
    try:
        flatten(value, "value", [], "kl.syntax")
    except (TypeError, ValueError):
        return False
    return True


def _checked(names, before, after, state_index):
    """`after` (a body's results); raises when a variable that is not Kiln state changed,
    which a loop over arrays cannot carry."""
    for i, (old, new) in enumerate(zip(before, after)):
        if i not in state_index and old is not UNSET and new is not old:
            raise ValueError(f"kiln: kl.syntax: '{names[i]}' changes in a loop or branch whose condition is a kl.Bool, "
                             f"but it holds {type(new).__name__}, not a Kiln value; make it one (e.g. kl.UInt32(...))")
    return after


def _written_back(original, new):
    """The value a name holds after the statement: a generator passed in is advanced in
    place (as its methods do in Python), anything else is the statement's result."""
    if isinstance(original, PCG32) and isinstance(new, PCG32) and original is not new:
        original.state, original.inc = new.state, new.inc
        return original
    return new


def _merged(values, indices, results):
    """`values` with `results` at `indices`."""
    merged = list(values)
    for i, value in zip(indices, results):
        merged[i] = _written_back(values[i], value)
    return tuple(merged)


def run_while(names, values, cond, body, line):
    """A `while` statement: Python's loop for a Python condition, else kl.while_loop over
    the Kiln values among `values`."""
    condition = cond(*values)
    if not isinstance(condition, Bool):
        while condition:
            values = body(*values)
            condition = cond(*values)
        return values
    state_index = [i for i, value in enumerate(values) if _is_state(value)]
    if not state_index:
        raise ValueError(f"kiln: kl.syntax: the while loop at line {line} tests a kl.Bool but changes no Kiln value")

    def full(state):
        merged = list(values)
        for i, value in zip(state_index, state):
            merged[i] = value
        return merged

    def loop_body(*state):
        merged = full(state)
        after = _checked(names, merged, body(*merged), state_index)
        new_state = tuple(after[i] for i in state_index)
        return new_state if len(new_state) > 1 else new_state[0]

    state = tuple(values[i] for i in state_index)
    result = while_loop(state, lambda *s: cond(*full(s)), loop_body, name=f"kl.syntax loop at line {line}")
    return _merged(values, state_index, result if isinstance(result, tuple) else (result,))


def run_if(condition, names, values, true_fn, false_fn, line):
    """An `if` statement: the branch Python picks for a Python condition, else kl.if_stmt
    with the Kiln values among `values` as its arguments and results."""
    if not isinstance(condition, Bool):
        return true_fn(*values) if condition else false_fn(*values)
    state_index = [i for i, value in enumerate(values) if _is_state(value)]
    result_index = []  # the variables holding Kiln values after the first branch traced

    def branch(fn):
        def run(*state):
            merged = list(values)
            for i, value in zip(state_index, state):
                merged[i] = value
            after = _checked(names, merged, fn(*merged), state_index)
            if not result_index:
                result_index.extend(i for i, value in enumerate(after) if _is_state(value))
            missing = [names[i] for i in result_index if not _is_state(after[i])]
            if missing:
                raise ValueError(f"kiln: kl.syntax: the if at line {line} tests a kl.Bool; {', '.join(missing)} must "
                                 "hold a Kiln value after both branches (assign it in both, or before the if)")
            return tuple(after[i] for i in result_index)

        return run

    results = if_stmt(condition, branch(true_fn), branch(false_fn), args=tuple(values[i] for i in state_index),
                      name=f"kl.syntax if at line {line}")
    return _merged(values, result_index, results if isinstance(results, tuple) else (results,))


# ---------------------------------------------------------------------------------------
# The rewriting

def _local_scope_nodes(nodes):
    """Every node under `nodes` outside nested functions, lambdas and classes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _names(nodes):
    """(assigned, read) variable names under `nodes`; a subscript or attribute assignment
    (x[m] = ..., x.a = ...) counts its base variable as assigned."""
    assigned, read = set(), set()
    for node in _local_scope_nodes(nodes):
        if isinstance(node, ast.Name):
            (assigned if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                assigned.add(base.id)
    return assigned, read


def _leaves_python_control(nodes):
    """Whether `nodes` contain break, continue, return or yield (also a break of a nested
    Python loop: conservative), which only Python's own statements can run."""
    for node in _local_scope_nodes(nodes):
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
    return False


class _Rewriter(ast.NodeTransformer):
    def __init__(self, function_locals, first_line):
        self.function_locals = function_locals
        self.line_offset = first_line - 1  # the source's first line is the file's first_line
        self.count = 0

    def visit_FunctionDef(self, node):  # nested functions keep their own statements
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def _variables(self, parts):
        assigned, read = _names(parts)
        return sorted(assigned | (read & self.function_locals))

    def _function(self, name, names, body, result):
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        return ast.FunctionDef(name=name, args=arguments, body=list(body) + [ast.Return(value=result)],
                               decorator_list=[], returns=None, type_params=[])

    def _tuple(self, names, ctx):
        return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx())

    def _call(self, function, arguments):
        return ast.Call(func=ast.Attribute(value=ast.Name(id=_RUNTIME, ctx=ast.Load()), attr=function, ctx=ast.Load()),
                        args=arguments, keywords=[])

    def _values(self, names):
        names_tuple = ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())
        locals_call = ast.Call(func=ast.Name(id="locals", ctx=ast.Load()), args=[], keywords=[])
        return names_tuple, self._call("lookup", [locals_call, names_tuple])

    def visit_While(self, node):
        self.generic_visit(node)
        if node.orelse or _leaves_python_control(node.body):
            return node
        self.count += 1
        names = self._variables([node.test] + node.body)
        cond = self._function(f"_kiln_cond_{self.count}", names, [], node.test)
        body = self._function(f"_kiln_body_{self.count}", names, node.body, self._tuple(names, ast.Load))
        names_tuple, values = self._values(names)
        call = self._call("run_while", [names_tuple, values, ast.Name(id=cond.name, ctx=ast.Load()),
                                        ast.Name(id=body.name, ctx=ast.Load()), ast.Constant(node.lineno + self.line_offset)])
        return [cond, body, ast.Assign(targets=[self._tuple(names, ast.Store)], value=call)]

    def visit_If(self, node):
        self.generic_visit(node)
        if _leaves_python_control(node.body + node.orelse):
            return node
        self.count += 1
        names = self._variables(node.body + node.orelse)
        true_fn = self._function(f"_kiln_true_{self.count}", names, node.body, self._tuple(names, ast.Load))
        false_fn = self._function(f"_kiln_false_{self.count}", names, node.orelse or [ast.Pass()],
                                  self._tuple(names, ast.Load))
        names_tuple, values = self._values(names)
        call = self._call("run_if", [node.test, names_tuple, values, ast.Name(id=true_fn.name, ctx=ast.Load()),
                                     ast.Name(id=false_fn.name, ctx=ast.Load()), ast.Constant(node.lineno + self.line_offset)])
        return [true_fn, false_fn, ast.Assign(targets=[self._tuple(names, ast.Store)], value=call)]


def _function_locals(definition):
    """The function's parameters and the names it assigns (its local variables)."""
    arguments = definition.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    return names | _names(definition.body)[0]


def syntax(function=None, *, print_code=False):
    """Rewrites `function`'s `while` and `if` statements so that conditions that are Kiln
    arrays run as kl.while_loop / kl.if_stmt (Dr.Jit's @dr.syntax; see the module's text).
    `print_code=True` prints the rewritten source."""
    if function is None:
        return functools.partial(syntax, print_code=print_code)
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError) as error:
        raise ValueError(f"kiln: kl.syntax: cannot read the source of {function.__qualname__} ({error}); "
                         "it needs a function defined in a file or a notebook cell") from error
    module = ast.parse(source)
    definition = module.body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(f"kiln: kl.syntax: {function.__qualname__} is not a function definition")
    definition.decorator_list = []
    first_line = function.__code__.co_firstlineno
    definition = _Rewriter(_function_locals(definition), first_line).generic_visit(definition)
    free = list(function.__code__.co_freevars)
    maker = ast.FunctionDef(
        name="_kiln_make",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in [_RUNTIME] + free], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))], decorator_list=[],
        returns=None, type_params=[])
    wrapper = ast.fix_missing_locations(ast.Module(body=[maker], type_ignores=[]))
    ast.increment_lineno(wrapper, first_line - 1)
    if print_code:
        print(ast.unparse(definition))
    scope = {}
    exec(compile(wrapper, function.__code__.co_filename, "exec"), function.__globals__, scope)
    rewritten = scope["_kiln_make"](sys.modules[__name__],
                                    *[cell.cell_contents for cell in function.__closure__ or ()])
    rewritten.__defaults__ = function.__defaults__
    rewritten.__kwdefaults__ = function.__kwdefaults__
    return functools.update_wrapper(rewritten, function)
