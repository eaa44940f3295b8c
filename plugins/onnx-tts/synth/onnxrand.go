package synth

// Piper's VITS graphs draw their noise inside the graph: two RandomNormalLike nodes (the
// duration predictor's and the flow's), unseeded, so ONNX Runtime gives other samples on
// every run. ONNX Runtime keeps a seeded node's generator across runs too, so a seed
// alone would make a clip depend on what the session synthesised before it. The plugin
// therefore rewrites each RandomNormalLike into a fixed function of the element index:
// a hash of the index (sin, in double precision) gives two uniforms, Box-Muller turns
// them into a standard normal, scaled by the node's mean and scale. Every run of the
// same input then sees the same noise, at the same cost, in any session. The rewrite
// works on the serialised protobuf (google.golang.org/protobuf/encoding/protowire), so
// the plugin needs no ONNX schema package.

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX protobuf field numbers (onnx.proto3).
const (
	modelGraph = 7

	graphNode        = 1
	graphInitializer = 5

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	nodeDomain    = 7

	attrName = 1
	attrF    = 2
	attrI    = 3
	attrT    = 5
	attrType = 20

	attrTypeFloat  = 1
	attrTypeInt    = 2
	attrTypeTensor = 4

	tensorDims     = 1
	tensorDataType = 2
	tensorName     = 8
	tensorRaw      = 9

	dtFloat  = 1
	dtInt64  = 7
	dtDouble = 11
)

// noiseRewrite is the version of the rewrite; it is part of the plugin's identity.
const noiseRewrite = "sinhash-boxmuller-v1"

// fixNoise returns the model with every RandomNormalLike replaced by the fixed
// generator, and how many it replaced.
func fixNoise(model []byte) ([]byte, int, error) {
	var out []byte
	n := 0
	for b := model; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, 0, fmt.Errorf("onnx: bad model protobuf: %w", protowire.ParseError(l))
		}
		fl := protowire.ConsumeFieldValue(num, typ, b[l:])
		if fl < 0 {
			return nil, 0, fmt.Errorf("onnx: bad model protobuf: %w", protowire.ParseError(fl))
		}
		if num == modelGraph && typ == protowire.BytesType {
			g, _ := protowire.ConsumeBytes(b[l:])
			ng, k, err := fixGraph(g)
			if err != nil {
				return nil, 0, err
			}
			n += k
			out = protowire.AppendTag(out, modelGraph, protowire.BytesType)
			out = protowire.AppendBytes(out, ng)
		} else {
			out = append(out, b[:l+fl]...)
		}
		b = b[l+fl:]
	}
	return out, n, nil
}

type node struct {
	name, op, domain string
	inputs, outputs  []string
	floats           map[string]float32
	ints             map[string]int64
}

func parseNode(b []byte) (node, error) {
	nd := node{floats: map[string]float32{}, ints: map[string]int64{}}
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nd, protowire.ParseError(l)
		}
		fl := protowire.ConsumeFieldValue(num, typ, b[l:])
		if fl < 0 {
			return nd, protowire.ParseError(fl)
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[l:])
			switch num {
			case nodeInput:
				nd.inputs = append(nd.inputs, string(v))
			case nodeOutput:
				nd.outputs = append(nd.outputs, string(v))
			case nodeName:
				nd.name = string(v)
			case nodeOpType:
				nd.op = string(v)
			case nodeDomain:
				nd.domain = string(v)
			case nodeAttribute:
				if err := parseAttr(v, &nd); err != nil {
					return nd, err
				}
			}
		}
		b = b[l+fl:]
	}
	return nd, nil
}

func parseAttr(b []byte, nd *node) error {
	var name string
	var f float32
	var i int64
	var typ int64
	for len(b) > 0 {
		num, wt, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		fl := protowire.ConsumeFieldValue(num, wt, b[l:])
		if fl < 0 {
			return protowire.ParseError(fl)
		}
		switch {
		case num == attrName && wt == protowire.BytesType:
			v, _ := protowire.ConsumeBytes(b[l:])
			name = string(v)
		case num == attrF && wt == protowire.Fixed32Type:
			v, _ := protowire.ConsumeFixed32(b[l:])
			f = math.Float32frombits(v)
		case num == attrI && wt == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(b[l:])
			i = int64(v)
		case num == attrType && wt == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(b[l:])
			typ = int64(v)
		}
		b = b[l+fl:]
	}
	switch typ {
	case attrTypeFloat:
		nd.floats[name] = f
	case attrTypeInt:
		nd.ints[name] = i
	}
	return nil
}

func fixGraph(g []byte) ([]byte, int, error) {
	var out []byte
	k := 0
	for b := g; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, 0, fmt.Errorf("onnx: bad graph protobuf: %w", protowire.ParseError(l))
		}
		fl := protowire.ConsumeFieldValue(num, typ, b[l:])
		if fl < 0 {
			return nil, 0, fmt.Errorf("onnx: bad graph protobuf: %w", protowire.ParseError(fl))
		}
		field := b[:l+fl]
		b = b[l+fl:]
		if num != graphNode || typ != protowire.BytesType {
			out = append(out, field...)
			continue
		}
		v, _ := protowire.ConsumeBytes(field[l:])
		nd, err := parseNode(v)
		if err != nil {
			return nil, 0, fmt.Errorf("onnx: bad node protobuf: %w", err)
		}
		switch {
		case nd.domain == "" && nd.op == "RandomNormalLike":
			if dt, ok := nd.ints["dtype"]; ok && dt != dtFloat {
				return nil, 0, fmt.Errorf("onnx: node %s: RandomNormalLike of dtype %d; only float is rewritten", nd.name, dt)
			}
			if len(nd.inputs) != 1 || len(nd.outputs) != 1 {
				return nil, 0, fmt.Errorf("onnx: node %s: RandomNormalLike with %d inputs, %d outputs", nd.name, len(nd.inputs), len(nd.outputs))
			}
			out = appendNormalLike(out, k, nd)
			k++
		case nd.domain == "" && (nd.op == "RandomNormal" || nd.op == "RandomUniform" || nd.op == "RandomUniformLike" || nd.op == "Multinomial" || nd.op == "Bernoulli"):
			return nil, 0, fmt.Errorf("onnx: node %s draws random numbers (%s), which the plugin cannot make reproducible", nd.name, nd.op)
		default:
			out = append(out, field...)
		}
	}
	return out, k, nil
}

func appendNode(out []byte, name, op string, inputs, outputs []string, attrs ...[]byte) []byte {
	var nb []byte
	for _, s := range inputs {
		nb = protowire.AppendTag(nb, nodeInput, protowire.BytesType)
		nb = protowire.AppendString(nb, s)
	}
	for _, s := range outputs {
		nb = protowire.AppendTag(nb, nodeOutput, protowire.BytesType)
		nb = protowire.AppendString(nb, s)
	}
	nb = protowire.AppendTag(nb, nodeName, protowire.BytesType)
	nb = protowire.AppendString(nb, name)
	nb = protowire.AppendTag(nb, nodeOpType, protowire.BytesType)
	nb = protowire.AppendString(nb, op)
	for _, a := range attrs {
		nb = protowire.AppendTag(nb, nodeAttribute, protowire.BytesType)
		nb = protowire.AppendBytes(nb, a)
	}
	out = protowire.AppendTag(out, graphNode, protowire.BytesType)
	return protowire.AppendBytes(out, nb)
}

func tensorProto(name string, dt int, dims []int64, raw []byte) []byte {
	var t []byte
	for _, d := range dims {
		t = protowire.AppendTag(t, tensorDims, protowire.VarintType)
		t = protowire.AppendVarint(t, uint64(d))
	}
	t = protowire.AppendTag(t, tensorDataType, protowire.VarintType)
	t = protowire.AppendVarint(t, uint64(dt))
	if name != "" {
		t = protowire.AppendTag(t, tensorName, protowire.BytesType)
		t = protowire.AppendString(t, name)
	}
	t = protowire.AppendTag(t, tensorRaw, protowire.BytesType)
	return protowire.AppendBytes(t, raw)
}

func appendInitializer(out []byte, name string, dt int, dims []int64, raw []byte) []byte {
	out = protowire.AppendTag(out, graphInitializer, protowire.BytesType)
	return protowire.AppendBytes(out, tensorProto(name, dt, dims, raw))
}

func doubleRaw(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }
func int64Raw(v int64) []byte    { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func intAttr(name string, v int64) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	a = protowire.AppendTag(a, attrI, protowire.VarintType)
	a = protowire.AppendVarint(a, uint64(v))
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	return protowire.AppendVarint(a, attrTypeInt)
}

func tensorAttr(name string, t []byte) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	a = protowire.AppendTag(a, attrT, protowire.BytesType)
	a = protowire.AppendBytes(a, t)
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	return protowire.AppendVarint(a, attrTypeTensor)
}

// appendNormalLike writes the fixed generator for the k-th RandomNormalLike node nd: its
// initializers and nodes, ending in nd's output with nd's input's shape.
func appendNormalLike(out []byte, k int, nd node) []byte {
	p := fmt.Sprintf("duplexmpe_noise%d/", k)
	mean, scale := float64(0), float64(1)
	if v, ok := nd.floats["mean"]; ok {
		mean = float64(v)
	}
	if v, ok := nd.floats["scale"]; ok {
		scale = float64(v)
	}
	consts := []struct {
		name string
		v    float64
	}{
		{"offset", float64(k) * 1e6}, {"k1", 12.9898}, {"k2", 78.233}, {"big", 43758.5453},
		{"eps", 1e-12}, {"m2", -2}, {"twopi", 2 * math.Pi}, {"halfpi", math.Pi / 2},
		{"scale", scale}, {"mean", mean},
	}
	for _, c := range consts {
		out = appendInitializer(out, p+c.name, dtDouble, nil, doubleRaw(c.v))
	}
	out = appendInitializer(out, p+"flat", dtInt64, []int64{1}, int64Raw(-1))
	out = appendInitializer(out, p+"axis", dtInt64, nil, int64Raw(0))
	one := tensorProto("", dtDouble, []int64{1}, doubleRaw(1))
	n := func(op string, ins []string, o string, attrs ...[]byte) {
		out = appendNode(out, p+o, op, ins, []string{p + o}, attrs...)
	}
	c := func(s string) string { return p + s }
	n("Shape", []string{nd.inputs[0]}, "shape")
	n("ConstantOfShape", []string{c("shape")}, "ones", tensorAttr("value", one))
	n("Reshape", []string{c("ones"), c("flat")}, "ones_flat")
	n("CumSum", []string{c("ones_flat"), c("axis")}, "index")
	n("Add", []string{c("index"), c("offset")}, "i")
	// Two uniforms in [0, 1): frac(sin(i * k) * big).
	for _, u := range []string{"1", "2"} {
		n("Mul", []string{c("i"), c("k" + u)}, "a"+u)
		n("Sin", []string{c("a" + u)}, "s"+u)
		n("Mul", []string{c("s" + u), c("big")}, "b"+u)
		n("Floor", []string{c("b" + u)}, "f"+u)
		n("Sub", []string{c("b" + u), c("f" + u)}, "u"+u)
	}
	// Box-Muller: sqrt(-2 ln u1) * cos(2 pi u2), cos written as sin(x + pi/2).
	n("Max", []string{c("u1"), c("eps")}, "u1c")
	n("Log", []string{c("u1c")}, "ln")
	n("Mul", []string{c("ln"), c("m2")}, "r2")
	n("Sqrt", []string{c("r2")}, "r")
	n("Mul", []string{c("u2"), c("twopi")}, "t")
	n("Add", []string{c("t"), c("halfpi")}, "tc")
	n("Sin", []string{c("tc")}, "cos")
	n("Mul", []string{c("r"), c("cos")}, "z")
	n("Mul", []string{c("z"), c("scale")}, "zs")
	n("Add", []string{c("zs"), c("mean")}, "zm")
	n("Cast", []string{c("zm")}, "zf", intAttr("to", dtFloat))
	out = appendNode(out, p+"out", "Reshape", []string{c("zf"), c("shape")}, []string{nd.outputs[0]})
	return out
}
