"""The installed package's type information: the stub kiln/_kiln.pyi and every module parse,
the stub declares each method the package's Python code adds to the bound classes, and mypy
accepts a new user's program (typing_program.py) while flagging a wrong call."""

import ast
import inspect
import pathlib
import re
import subprocess
import sys

import kiln as kl

PACKAGE = pathlib.Path(kl.__file__).parent
STUB = PACKAGE / "_kiln.pyi"
PROGRAM = pathlib.Path(__file__).with_name("typing_program.py")
WRONG_PROGRAM = """\
import kiln as kl
x = kl.linspace(kl.Float, 0.0, 1.0, 10)
count: kl.Int32 = kl.sqrt(x)
kl.zeros(kl.Float, "10")
"""
WRONG_LINES = {3: "assignment", 4: "call-overload"}  # line -> the mypy error code it must get


def added_by_kiln_python(cls):
    """Names of the methods and properties that the package's Python code set on a bound class."""
    functions = {name: value.fget if isinstance(value, property) else value for name, value in vars(cls).items()}
    return {name for name, f in functions.items()
            if inspect.isfunction(f) and f.__module__.split(".")[0] == "kiln"}


def stub_classes():
    """Each class of the stub with the names of the methods and properties it declares."""
    tree = ast.parse(STUB.read_text(), filename=str(STUB))
    return {node.name: {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
            for node in tree.body if isinstance(node, ast.ClassDef)}


def test_the_stub_and_every_module_parse():
    sources = [STUB, *sorted(PACKAGE.glob("*.py"))]
    assert len(sources) >= 8, sources
    for source in sources:
        ast.parse(source.read_text(), filename=str(source))


def test_the_stub_declares_what_python_adds_to_the_bound_classes():
    declared = stub_classes()
    bound = {name: cls for name, cls in vars(kl._kiln).items() if inspect.isclass(cls)}
    patched = {name: added_by_kiln_python(cls) for name, cls in bound.items() if added_by_kiln_python(cls)}
    assert {"Float", "Array3f", "Matrix4f", "TensorXf"} <= patched.keys(), patched.keys()
    assert {"T", "__getitem__", "numpy"} <= patched["TensorXf"]
    missing = {name: sorted(names - declared.get(name, set())) for name, names in patched.items()
               if names - declared.get(name, set())}
    assert not missing, f"_kiln.pyi lacks these Python-added members (python/stub_patterns.txt): {missing}"


def test_mypy_accepts_a_user_program_and_flags_a_wrong_call(tmp_path):
    wrong = tmp_path / "wrong_program.py"
    wrong.write_text(WRONG_PROGRAM)
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
                             "--no-error-summary", "--show-error-codes", str(PROGRAM), wrong.name],
                            capture_output=True, text=True, cwd=tmp_path)
    errors = [line for line in result.stdout.splitlines() if ": error: " in line]
    flagged = {int(m.group(1)): m.group(2) for e in errors
               if (m := re.match(r"wrong_program\.py:(\d+): error: .*\[([\w-]+)\]$", e))}
    assert len(flagged) == len(errors), result.stdout + result.stderr
    assert flagged == WRONG_LINES, result.stdout + result.stderr


def test_the_user_program_runs():
    result = subprocess.run([sys.executable, str(PROGRAM)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "typing_program: ok"
