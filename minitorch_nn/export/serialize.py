"""``export.save(ep, f)`` / ``export.load(f)`` (mirrors ``torch.export.save``/``load``, own format).

The file is a zip archive with three entries:

* ``program.json`` -- the graph (nodes with op, target, arguments, shapes, dtypes), the
  signature, the structure of ``forward``'s inputs and outputs, and a format name and version;
* ``weights.safetensors`` -- ``ep.state_dict`` (a tied tensor stored once; the other names are
  listed in ``program.json`` as aliases);
* ``constants.safetensors`` -- ``ep.constants``.

Nothing in it is executed when loading: op targets are looked up by name in the op registry
(``aten.add.Tensor``) and anything unknown is refused. :func:`load` checks the file against the
schema (format name and version, every field's type, references to earlier nodes only, the
weights matching the signature's names, shapes and dtypes) and raises ``RuntimeError`` naming
the first problem.

Differences from PyTorch: PyTorch writes a ``.pt2`` archive with a Thrift-like schema; files are
not interchangeable. Source locations are kept (the printed graph still shows the user's lines).
"""

from __future__ import annotations

import io
import json
import operator
import os
import zipfile

from minitorch_nn.export.graph import (
    SCHEMA_VERSION,
    Graph,
    Node,
    Ref,
    decode_arg,
    decode_val,
    encode_arg,
    encode_val,
    target_name,
)

FORMAT = "minitorch_nn.export"
_ENTRIES = ("program.json", "weights.safetensors", "constants.safetensors")


class SerializationError(RuntimeError):
    """A file that is not an exported program of a version this code can read."""


def _node_to_json(n: Node) -> dict:
    out = {"op": n.op, "name": n.name}
    if n.op == "call_function":
        out["target"] = target_name(n.target)
        out["args"] = encode_arg(list(n.args))
        out["kwargs"] = {k: encode_arg(v) for k, v in n.kwargs.items()}
    if n.op == "output":
        spec, leaves = n.args[0]
        out["out_spec"] = spec
        out["out_leaves"] = [encode_arg(x) for x in leaves]
    if "val" in n.meta:
        out["val"] = encode_val(n.meta["val"])
    if "stack" in n.meta:
        out["stack"] = {k: v for k, v in n.meta["stack"].items() if k != "path"}
    return out


def save(ep, f) -> None:
    """Write ``ep`` to ``f`` (a path or a binary file object)."""
    from minitorch_nn import safetensors_io

    sig = ep.graph_signature
    weights, aliases = {}, {}
    first_name: dict[int, str] = {}
    for name, t in ep.state_dict.items():
        if id(t) in first_name:
            aliases[name] = first_name[id(t)]
            continue
        first_name[id(t)] = name
        weights[name] = _savable(name, t)
    constants = {name: _savable(name, t) for name, t in ep.constants.items()}
    program = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "root": ep._root_name,
        "graph": [_node_to_json(n) for n in ep.graph.nodes],
        "input_specs": [{"kind": s.kind.name, "name": s.arg.name, "target": s.target, "persistent": s.persistent}
                        for s in sig.input_specs],
        "output_specs": [{"kind": s.kind.name, "name": s.arg.name} for s in sig.output_specs],
        "forward_params": ep._forward_params,
        "state_dict_keys": list(ep.state_dict),
        "aliases": aliases,
        "constant_keys": list(ep.constants),
    }
    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("program.json", json.dumps(program, indent=1))
        z.writestr("weights.safetensors", safetensors_io.save(weights))
        z.writestr("constants.safetensors", safetensors_io.save(constants))
    data = blob.getvalue()
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


def _savable(name, t):
    if t.is_meta:
        raise RuntimeError(f"export.save: {name!r} is a meta tensor (no data to save); load real weights first")
    return t.detach().contiguous()


def _fail(msg):
    raise SerializationError(f"export.load: {msg}\n(The file is not an exported program this version can read.)")


def _expect(cond, msg):
    if not cond:
        _fail(msg)


def _lookup_op(target):
    from minitorch_nn._ops import OpOverload, ops
    from minitorch_nn.export.composites import COMPOSITES

    if target in COMPOSITES:  # aten.linear.default & co. (export/composites.py), not in ops.aten
        return COMPOSITES[target]
    if target == "operator.getitem":  # an element of a multi-output node
        return operator.getitem
    parts = str(target).split(".")
    _expect(len(parts) == 3 and parts[0] == "aten", f"unknown op target {target!r}")
    try:
        op = getattr(getattr(ops.aten, parts[1]), parts[2])
    except (AttributeError, KeyError, RuntimeError):
        _fail(f"unknown op target {target!r}")
    _expect(isinstance(op, OpOverload), f"unknown op target {target!r}")
    return op


def _count_leaves(spec) -> int:
    """How many tensors a flatten() structure holds; -1 when it is malformed."""
    if spec == "*":
        return 1
    if not isinstance(spec, dict) or len(spec) != 1:
        return -1
    (kind, body), = spec.items()
    if kind == "const":
        return 0 if body is None or isinstance(body, (bool, int, float, str)) else -1
    if kind in ("tuple", "list") and isinstance(body, list):
        counts = [_count_leaves(x) for x in body]
    elif kind == "dict" and isinstance(body, list) and all(isinstance(kv, list) and len(kv) == 2 for kv in body):
        counts = [_count_leaves(v) for _, v in body]
    else:
        return -1
    return -1 if -1 in counts else sum(counts)


def _check_refs(a, known, where):
    if isinstance(a, Ref):
        _expect(a.name in known, f"node {where!r} uses {a.name!r} before it is defined")
    elif isinstance(a, (list, tuple)):
        for x in a:
            _check_refs(x, known, where)


def _graph_from_json(nodes_json) -> Graph:
    _expect(isinstance(nodes_json, list) and nodes_json, "'graph' must be a non-empty list of nodes")
    nodes, known = [], set()
    for i, nj in enumerate(nodes_json):
        _expect(isinstance(nj, dict) and isinstance(nj.get("name"), str) and nj.get("op") in
                ("placeholder", "call_function", "output"), f"node {i} is malformed")
        name, op = nj["name"], nj["op"]
        _expect(name not in known, f"node name {name!r} appears twice")
        try:
            meta = {"val": decode_val(nj["val"])} if "val" in nj else {}
            if isinstance(nj.get("stack"), dict):
                meta["stack"] = nj["stack"]
            if op == "placeholder":
                _expect(meta.get("val") is not None, f"placeholder {name!r} has no shape and dtype")
                node = Node("placeholder", name, meta=meta)
            elif op == "call_function":
                _expect(isinstance(nj.get("args"), list) and isinstance(nj.get("kwargs", {}), dict),
                        f"node {name!r} has malformed arguments")
                args = tuple(decode_arg(nj["args"]))
                kwargs = {k: decode_arg(v) for k, v in nj.get("kwargs", {}).items()}
                _check_refs(args, known, name)
                _check_refs(list(kwargs.values()), known, name)
                target = _lookup_op(nj.get("target"))
                _expect(target is not operator.getitem or (len(args) == 2 and isinstance(args[0], Ref)
                                                           and type(args[1]) is int and not kwargs),
                        f"getitem node {name!r} must read one element of an earlier node")
                node = Node("call_function", name, target=target, args=args, kwargs=kwargs, meta=meta)
            else:
                _expect(i == len(nodes_json) - 1, "the output node must be the last node")
                leaves = [decode_arg(x) for x in nj.get("out_leaves", [])]
                _check_refs(leaves, known, name)
                _expect(_count_leaves(nj.get("out_spec")) == len(leaves), "the output structure does not match "
                        "the number of outputs")
                node = Node("output", name, args=((nj.get("out_spec"), leaves),))
        except ValueError as e:
            _fail(f"node {name!r}: {e}")
        nodes.append(node)
        known.add(name)
    _expect(nodes[-1].op == "output", "the graph has no output node")
    return Graph(nodes)


def load(f):
    """Read an exported program written by :func:`save` (a path or a binary file object)."""
    from minitorch_nn import safetensors_io
    from minitorch_nn.export.exported_program import (
        ExportedProgram,
        ExportGraphSignature,
        InputKind,
        InputSpec,
        OutputKind,
        OutputSpec,
        TensorArgument,
    )

    data = open(f, "rb").read() if isinstance(f, (str, os.PathLike)) else f.read()
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = set(z.namelist())
    except zipfile.BadZipFile:
        _fail("not a zip archive")
    _expect(all(e in names for e in _ENTRIES), f"the archive must hold {', '.join(_ENTRIES)}")
    try:
        program = json.loads(z.read("program.json"))
    except ValueError as e:
        _fail(f"program.json is not valid JSON ({e})")
    _expect(isinstance(program, dict) and program.get("format") == FORMAT, f"the format is not {FORMAT!r}")
    _expect(program.get("schema_version") == SCHEMA_VERSION,
            f"schema version {program.get('schema_version')!r} does not match this version's {SCHEMA_VERSION}")
    graph = _graph_from_json(program.get("graph"))
    specs_json = program.get("input_specs")
    _expect(isinstance(specs_json, list), "'input_specs' must be a list")
    placeholders = graph.placeholders
    _expect(len(specs_json) == len(placeholders), "'input_specs' and the graph's inputs differ in number")
    input_specs = []
    for s, node in zip(specs_json, placeholders):
        _expect(isinstance(s, dict) and s.get("kind") in InputKind.__members__ and s.get("name") == node.name,
                f"input spec {s!r} does not match placeholder {node.name!r}")
        kind = InputKind[s["kind"]]
        _expect((s.get("target") is None) == (kind is InputKind.USER_INPUT), f"input spec {s!r} has a bad target")
        input_specs.append(InputSpec(kind, TensorArgument(node.name), s.get("target"), s.get("persistent")))
    outs = program.get("output_specs")
    _expect(isinstance(outs, list) and all(isinstance(o, dict) and o.get("kind") in OutputKind.__members__
                                           for o in outs), "'output_specs' is malformed")
    output_specs = [OutputSpec(OutputKind[o["kind"]], TensorArgument(str(o.get("name")))) for o in outs]
    forward_params = program.get("forward_params")
    _expect(isinstance(forward_params, list) and all(
        isinstance(p, dict) and isinstance(p.get("name"), str) and p.get("kind") in
        ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD")
        for p in forward_params), "'forward_params' is malformed")
    n_user = sum(s.kind is InputKind.USER_INPUT for s in input_specs)
    counts = [_count_leaves(p.get("spec")) for p in forward_params]
    _expect(-1 not in counts and sum(counts) == n_user, "'forward_params' does not match the user inputs")

    weights = safetensors_io.load(z.read("weights.safetensors"))
    constants = safetensors_io.load(z.read("constants.safetensors"))
    aliases = program.get("aliases", {})
    _expect(isinstance(aliases, dict), "'aliases' must be a dict")
    state_dict = {}
    for key in program.get("state_dict_keys", []):
        source = aliases.get(key, key)
        _expect(source in weights, f"weights.safetensors has no tensor {source!r}")
        state_dict[key] = weights[source]
    constants = {k: constants[k] for k in program.get("constant_keys", []) if _present(constants, k)}
    params = {s.target for s in input_specs if s.kind is InputKind.PARAMETER}
    from minitorch_nn.nn.parameter import Parameter

    shared: dict[int, Parameter] = {}
    for key in list(state_dict):
        if key in params:
            t = state_dict[key]
            state_dict[key] = shared.setdefault(id(t), Parameter(t))
    for spec, node in zip(input_specs, placeholders):
        if spec.kind is InputKind.USER_INPUT:
            continue
        store = state_dict if (spec.kind is InputKind.PARAMETER or
                               (spec.kind is InputKind.BUFFER and spec.persistent)) else constants
        _expect(spec.target in store, f"no tensor stored for {spec.target!r}")
        t = store[spec.target]
        _expect((tuple(t.shape), t.dtype) == node.meta["val"],
                f"the stored {spec.target!r} is {t.dtype}{list(t.shape)}, the graph expects "
                f"{node.meta['val'][1]}{list(node.meta['val'][0])}")
    sig = ExportGraphSignature(input_specs, output_specs)
    return ExportedProgram(graph, sig, state_dict, constants, forward_params, str(program.get("root", "Module")))


def _present(d, k):
    _expect(k in d, f"constants.safetensors has no tensor {k!r}")
    return True
