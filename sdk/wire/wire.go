// Package wire holds what both ends of the Go plugin protocol share below the sdk types:
// the float32 little-endian PCM encoding of audio fields and the go-plugin constants.
// sdk.Serve (the plugin side) and core/pluginhost (the host side) both use it. It imports
// nothing of the project, so package sdk can depend on it. Plugin authors do not need it.
package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// littleEndian: on such machines (amd64, arm64) float32 slices already have the wire
// layout, and encoding is a memory copy.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// PluginSetKey is the go-plugin PluginSet key under which both sides register the
// duplexmpe services. It never appears on the wire.
const PluginSetKey = "duplexmpe"

// MaxMessageBytes is the gRPC message limit on both sides: a clip of several minutes of
// float32 audio fits in one message.
const MaxMessageBytes = 256 << 20

// AppendPCM appends samples to dst as float32 little-endian bytes and returns the
// extended slice. It allocates only when dst lacks capacity.
func AppendPCM(dst []byte, samples []float32) []byte {
	n := len(dst)
	need := n + 4*len(samples)
	if cap(dst) < need {
		grown := make([]byte, n, need)
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:need]
	out := dst[n:]
	if littleEndian && len(samples) > 0 {
		copy(out, unsafe.Slice((*byte)(unsafe.Pointer(&samples[0])), 4*len(samples)))
		return dst
	}
	for i, s := range samples {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(s))
	}
	return dst
}

// DecodePCM decodes float32 little-endian bytes into dst (reusing its capacity) and
// returns the samples. A length that is not a multiple of 4 is an error.
func DecodePCM(dst []float32, pcm []byte) ([]float32, error) {
	if len(pcm)%4 != 0 {
		return dst[:0], fmt.Errorf("pcm has %d bytes, not a multiple of 4 (float32 little-endian samples)", len(pcm))
	}
	n := len(pcm) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	if littleEndian && n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*n), pcm)
		return dst, nil
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(pcm[4*i:]))
	}
	return dst, nil
}
