"""Rewrite Kokoro's int8 ONNX export (kokoro-onnx's kokoro-v1.0.int8.onnx, made by
onnxruntime's dynamic quantiser) into a float32 graph with the same weights: every
quantised weight becomes the float initialiser (w_int - zero_point) * scale, so the float
graph computes what the int8 graph would without the 8-bit rounding of activations.

Patterns rewritten (all the export has; anything else is refused):
  DynamicQuantizeLinear(x) -> MatMulInteger(xq, Wq, xzp, wzp) -> Cast -> Mul(xs * ws)
      => MatMul(x, W)
  DynamicQuantizeLinear(x) -> ConvInteger(xq, Wq, xzp, wzp) [-> Add(floor(b / (xs*ws)))]
      -> Cast -> Mul(xs * ws)                  => Conv(x, W, b) (same attributes)
  DynamicQuantizeLSTM(X, Wq, Rq, B, ..., Ws, Wzp, Rs, Rzp)
      => LSTM(X, W^T, R^T, B, ...)   (the quantiser stored W as [dirs, in, 4H])
  Gather(Wq, ids) -> DequantizeLinear(s, zp) => Gather(W, ids)
Nodes left without consumers (the activation quantisers, the scale products, the bias
quantisers) are dropped.
"""
import collections
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


ALL_OPS = ("MatMulInteger", "ConvInteger", "DynamicQuantizeLSTM", "DequantizeLinear")


def dequantize(model: onnx.ModelProto, ops=ALL_OPS) -> tuple[onnx.ModelProto, collections.Counter]:
    """ops: which quantised node types to rewrite (all by default; ("ConvInteger",) leaves
    the matrix products and LSTMs in int8)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    arrays: dict[str, np.ndarray] = {}

    def arr(name):
        if name not in arrays:
            if name not in inits:
                raise ValueError(f"{name} is not an initialiser")
            arrays[name] = numpy_helper.to_array(inits[name])
        return arrays[name]

    prod, cons = {}, collections.defaultdict(list)
    for n in g.node:
        for o in n.output:
            prod[o] = n
        for i in n.input:
            cons[i].append(n)

    def only_consumer(name, op):
        cs = cons[name]
        if len(cs) != 1 or cs[0].op_type != op:
            raise ValueError(f"{name}: expected one {op} consumer, got {[c.op_type for c in cs]}")
        return cs[0]

    def weight_scale(scale_mul_out, dql):
        # scale_mul_out = Mul(xs, ws): ws is the weight scale initialiser
        sm = prod[scale_mul_out]
        if sm.op_type != "Mul" or sm.input[0] != dql.output[1]:
            raise ValueError(f"{scale_mul_out}: not Mul(x_scale, w_scale)")
        return arr(sm.input[1])

    new_inits: list[onnx.TensorProto] = []
    made: set[str] = set()

    def add_init(w, name):
        # A weight several nodes share (ALBERT's one layer, run 12 times) is made once.
        if name not in made:
            made.add(name)
            new_inits.append(numpy_helper.from_array(np.ascontiguousarray(w, dtype=np.float32), name))
    replace: dict[int, onnx.NodeProto] = {}  # id(old node) -> new node (or None: drop)
    done = collections.Counter()
    for n in g.node:
        if n.op_type not in ops:
            continue
        if n.op_type == "MatMulInteger":
            dql = prod[n.input[0]]
            assert dql.op_type == "DynamicQuantizeLinear"
            cast = only_consumer(n.output[0], "Cast")
            mul = only_consumer(cast.output[0], "Mul")
            ws = weight_scale(mul.input[1], dql)
            w = (arr(n.input[1]).astype(np.float32) - arr(n.input[3]).astype(np.float32)) * ws.astype(np.float32)
            wname = n.input[1] + "_dequantized"
            add_init(w, wname)
            replace[id(n)] = helper.make_node("MatMul", [dql.input[0], wname], [mul.output[0]], name=n.name + "_float")
            replace[id(cast)] = replace[id(mul)] = None
            done["MatMulInteger -> MatMul"] += 1
        elif n.op_type == "ConvInteger":
            dql = prod[n.input[0]]
            assert dql.op_type == "DynamicQuantizeLinear"
            nxt = cons[n.output[0]]
            if len(nxt) != 1:
                raise ValueError(n.name)
            bias = None
            add = None
            if nxt[0].op_type == "Add":
                add = nxt[0]
                # Add input 1: Reshape(Cast(Floor(Div(b, bias_scale))))
                r = prod[add.input[1]]
                c = prod[r.input[0]]
                f = prod[c.input[0]]
                d = prod[f.input[0]]
                if (r.op_type, c.op_type, f.op_type, d.op_type) != ("Reshape", "Cast", "Floor", "Div"):
                    raise ValueError(f"{n.name}: bias chain {(r.op_type, c.op_type, f.op_type, d.op_type)}")
                bias = d.input[0]
                arr(bias)
                cast = only_consumer(add.output[0], "Cast")
            else:
                cast = only_consumer(n.output[0], "Cast")
            mul = only_consumer(cast.output[0], "Mul")
            ws = weight_scale(mul.input[1], dql)
            wq = arr(n.input[1]).astype(np.float32)
            zp = arr(n.input[3]).astype(np.float32)
            if np.ndim(ws) == 1:  # per output channel
                ws = ws.reshape(-1, *([1] * (wq.ndim - 1)))
            if np.ndim(zp) == 1:
                zp = zp.reshape(-1, *([1] * (wq.ndim - 1)))
            w = (wq - zp) * ws.astype(np.float32)
            wname = n.input[1] + "_dequantized"
            add_init(w, wname)
            ins = [dql.input[0], wname] + ([bias] if bias else [])
            conv = helper.make_node("Conv", ins, [mul.output[0]], name=n.name + "_float")
            conv.attribute.extend(n.attribute)
            replace[id(n)] = conv
            for x in (add, cast, mul):
                if x is not None:
                    replace[id(x)] = None
            done["ConvInteger -> Conv" + (" (with bias)" if bias else "")] += 1
        elif n.op_type == "DynamicQuantizeLSTM":
            ins = list(n.input) + [""] * (12 - len(n.input))
            x, wq, rq, b, sl, h0, c0, p, wsn, wzn, rsn, rzn = ins
            def deq(q, s, z):
                q = arr(q).astype(np.float32)
                s = arr(s).astype(np.float32).reshape(-1, 1, 1)
                z = arr(z).astype(np.float32).reshape(-1, 1, 1)
                return ((q - z) * s).transpose(0, 2, 1)  # [dirs, in, 4H] -> [dirs, 4H, in]
            w, r = deq(wq, wsn, wzn), deq(rq, rsn, rzn)
            add_init(w, wq + "_dequantized")
            add_init(r, rq + "_dequantized")
            lstm_in = [x, wq + "_dequantized", rq + "_dequantized", b, sl, h0, c0, p]
            while lstm_in and lstm_in[-1] == "":
                lstm_in.pop()
            lstm = helper.make_node("LSTM", lstm_in, list(n.output), name=n.name + "_float")
            lstm.attribute.extend(n.attribute)
            replace[id(n)] = lstm
            done["DynamicQuantizeLSTM -> LSTM"] += 1
        elif n.op_type == "DequantizeLinear":
            gth = prod[n.input[0]]
            if gth.op_type != "Gather" or gth.input[0] not in inits:
                raise ValueError(f"{n.name}: DequantizeLinear not of a gathered weight")
            w = (arr(gth.input[0]).astype(np.float32) - arr(n.input[2]).astype(np.float32)) * arr(n.input[1]).astype(np.float32)
            wname = gth.input[0] + "_dequantized"
            add_init(w, wname)
            ng = helper.make_node("Gather", [wname, gth.input[1]], [n.output[0]], name=gth.name + "_float")
            ng.attribute.extend(gth.attribute)
            replace[id(gth)] = ng
            replace[id(n)] = None
            done["Gather + DequantizeLinear -> Gather"] += 1
    nodes = []
    for n in g.node:
        if id(n) in replace:
            if replace[id(n)] is not None:
                nodes.append(replace[id(n)])
        else:
            nodes.append(n)
    # Drop what nothing consumes any more (activation quantisers, scale products, ...).
    outputs = {o.name for o in g.output}
    while True:
        used = {i for n in nodes for i in n.input} | outputs
        keep = [n for n in nodes if any(o in used for o in n.output)]
        if len(keep) == len(nodes):
            break
        done["dead nodes dropped"] += len(nodes) - len(keep)
        nodes = keep
    used = {i for n in nodes for i in n.input}
    g.ClearField("node")
    g.node.extend(nodes)
    keep_inits = [t for t in g.initializer if t.name in used] + [t for t in new_inits if t.name in used]
    g.ClearField("initializer")
    g.initializer.extend(keep_inits)
    names = {o for n in nodes for o in n.output}
    vi = [v for v in g.value_info if v.name in names]
    g.ClearField("value_info")
    g.value_info.extend(vi)
    bad = {n.op_type for n in nodes} & set(ops)
    if bad:
        raise ValueError(f"quantised nodes left: {bad}")
    return model, done


def main():
    src, dst = sys.argv[1], sys.argv[2]
    ops = sys.argv[3].split(",") if len(sys.argv) > 3 else ALL_OPS
    m, done = dequantize(onnx.load(src), ops)
    onnx.save(m, dst)
    for k, v in sorted(done.items()):
        print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
