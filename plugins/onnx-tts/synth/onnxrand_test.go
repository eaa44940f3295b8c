package synth

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// randomNormalLikeModel is an ONNX model (opset 15) of one node: y = RandomNormalLike(x)
// with the given mean and scale, x and y float of any shape.
func randomNormalLikeModel(mean, scale float32) []byte {
	fa := func(name string, v float32) []byte {
		var a []byte
		a = protowire.AppendTag(a, attrName, protowire.BytesType)
		a = protowire.AppendString(a, name)
		a = protowire.AppendTag(a, attrF, protowire.Fixed32Type)
		a = protowire.AppendFixed32(a, math.Float32bits(v))
		a = protowire.AppendTag(a, attrType, protowire.VarintType)
		return protowire.AppendVarint(a, attrTypeFloat)
	}
	return oneNodeModel("RandomNormalLike", intAttr("dtype", dtFloat), fa("mean", mean), fa("scale", scale))
}

func randomOpModel(op string) []byte { return oneNodeModel(op) }

func oneNodeModel(op string, attrs ...[]byte) []byte {
	var g []byte
	g = appendNode(g, "n", op, []string{"x"}, []string{"y"}, attrs...)
	g = protowire.AppendTag(g, 2, protowire.BytesType) // name
	g = protowire.AppendString(g, "g")
	for _, io := range []struct {
		field protowire.Number
		name  string
	}{{11, "x"}, {12, "y"}} {
		// ValueInfoProto{name, type: TypeProto{tensor_type: {elem_type: float, shape: [?, ?]}}}
		var shape []byte
		for _, d := range []string{"a", "b"} {
			var dim []byte
			dim = protowire.AppendTag(dim, 2, protowire.BytesType) // dim_param
			dim = protowire.AppendString(dim, d)
			shape = protowire.AppendTag(shape, 1, protowire.BytesType)
			shape = protowire.AppendBytes(shape, dim)
		}
		var tt []byte
		tt = protowire.AppendTag(tt, 1, protowire.VarintType)
		tt = protowire.AppendVarint(tt, dtFloat)
		tt = protowire.AppendTag(tt, 2, protowire.BytesType)
		tt = protowire.AppendBytes(tt, shape)
		var typ []byte
		typ = protowire.AppendTag(typ, 1, protowire.BytesType)
		typ = protowire.AppendBytes(typ, tt)
		var vi []byte
		vi = protowire.AppendTag(vi, 1, protowire.BytesType)
		vi = protowire.AppendString(vi, io.name)
		vi = protowire.AppendTag(vi, 2, protowire.BytesType)
		vi = protowire.AppendBytes(vi, typ)
		g = protowire.AppendTag(g, io.field, protowire.BytesType)
		g = protowire.AppendBytes(g, vi)
	}
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType) // ir_version
	m = protowire.AppendVarint(m, 8)
	var opset []byte
	opset = protowire.AppendTag(opset, 2, protowire.VarintType) // version
	opset = protowire.AppendVarint(opset, 15)
	m = protowire.AppendTag(m, 8, protowire.BytesType)
	m = protowire.AppendBytes(m, opset)
	m = protowire.AppendTag(m, modelGraph, protowire.BytesType)
	return protowire.AppendBytes(m, g)
}
