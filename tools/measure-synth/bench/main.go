// Command bench times Kokoro graphs in the ONNX Runtime library the onnx-tts plugin loads
// (.cache/vad/libonnxruntime.so.1, through onnxruntime_go, as plugins/onnx-tts/synth
// does), on model inputs that measure.py wrote (--dump-tokens): process CPU time
// (getrusage) per second of audio, the graphs interleaved run by run, the median of the
// repetitions; the audio of each graph against the first; optionally ONNX Runtime's
// profile per graph, summed by node type. See ../README.md.
//
//	go run ./tools/measure-synth/bench -inputs tokens.json -reps 3 \
//	    int8=.cache/tts/kokoro/kokoro-v1.0.int8.onnx float32=.cache/measure-synth/kokoro-v1.0.dequantized-float32.onnx
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

type run struct {
	Tokens []int64   `json:"tokens"`
	Style  []float32 `json:"style"`
}

type item struct {
	Text  string `json:"text"`
	Voice string `json:"voice"`
	Runs  []run  `json:"runs"`
}

func cpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

type graph struct {
	name string
	sess *ort.DynamicAdvancedSession
}

func open(path string, threads int, profile string) (*ort.DynamicAdvancedSession, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(threads); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	if profile != "" {
		if err := opts.EnableProfiling(profile); err != nil {
			return nil, err
		}
	}
	return ort.NewDynamicAdvancedSession(path, []string{"tokens", "style", "speed"}, []string{"audio"}, opts)
}

func synth(s *ort.DynamicAdvancedSession, it item) ([]float32, error) {
	var out []float32
	for _, r := range it.Runs {
		in, err := ort.NewTensor(ort.NewShape(1, int64(len(r.Tokens))), r.Tokens)
		if err != nil {
			return nil, err
		}
		st, _ := ort.NewTensor(ort.NewShape(1, 256), r.Style)
		sp, _ := ort.NewTensor(ort.NewShape(1), []float32{1})
		outs := []ort.Value{nil}
		err = s.Run([]ort.Value{in, st, sp}, outs)
		in.Destroy()
		st.Destroy()
		sp.Destroy()
		if err != nil {
			return nil, err
		}
		out = append(out, outs[0].(*ort.Tensor[float32]).GetData()...)
		outs[0].Destroy()
	}
	return out, nil
}

func median(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y[len(y)/2]
}

func main() {
	inputs := flag.String("inputs", "", "JSON from measure.py --dump-tokens")
	n := flag.Int("n", 0, "use only the first n items (0: all)")
	reps := flag.Int("reps", 3, "repetitions")
	threads := flag.Int("threads", 1, "intra-op threads")
	lib := flag.String("onnxruntime", ".cache/vad/libonnxruntime.so.1", "the ONNX Runtime library")
	profile := flag.String("profile", "", "folder for ONNX Runtime profiles (one extra pass per graph)")
	flag.Parse()
	raw, err := os.ReadFile(*inputs)
	check(err)
	var items []item
	check(json.Unmarshal(raw, &items))
	if *n > 0 && *n < len(items) {
		items = items[:*n]
	}
	ort.SetSharedLibraryPath(*lib)
	check(ort.InitializeEnvironment())
	fmt.Printf("ONNX Runtime %s (%s); %d items; %d reps; %d intra-op thread(s)\n", ort.GetVersion(), *lib, len(items), *reps, *threads)
	var gs []graph
	for _, a := range flag.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok {
			check(fmt.Errorf("argument %q: want name=path.onnx", a))
		}
		c0, w0 := cpu(), time.Now()
		s, err := open(path, *threads, "")
		check(err)
		_, err = synth(s, items[0]) // warm-up
		check(err)
		fmt.Printf("  %s: load + warm-up %.1f s wall, %.1f CPU-s\n", name, time.Since(w0).Seconds(), cpu()-c0)
		gs = append(gs, graph{name, s})
	}
	ratio := make([][]float64, len(gs))
	wall := make([][]float64, len(gs))
	audio := make([][][]float32, len(gs))
	for r := 0; r < *reps; r++ {
		c := make([]float64, len(gs))
		w := make([]float64, len(gs))
		secs := make([]float64, len(gs))
		for i, it := range items {
			for j := range gs {
				g := (i + r + j) % len(gs) // rotate the order
				c0, w0 := cpu(), time.Now()
				a, err := synth(gs[g].sess, it)
				check(err)
				c[g] += cpu() - c0
				w[g] += time.Since(w0).Seconds()
				secs[g] += float64(len(a)) / 24000
				if r == 0 {
					audio[g] = append(audio[g], a)
				}
			}
		}
		for g := range gs {
			ratio[g] = append(ratio[g], c[g]/secs[g])
			wall[g] = append(wall[g], w[g]/secs[g])
			fmt.Printf("  rep %d %s: %.1f s audio, %.1f CPU-s (%.3f/s), %.1f s wall\n", r+1, gs[g].name, secs[g], c[g], c[g]/secs[g], w[g])
		}
	}
	base := median(ratio[0])
	fmt.Printf("\n| graph (Go, %d thread) | CPU-s per audio-s (median of %d) | wall-s per audio-s | speed-up vs %s | audio vs %s |\n|---|---|---|---|---|\n", *threads, *reps, gs[0].name, gs[0].name)
	for g := range gs {
		fmt.Printf("| %s | %.3f | %.3f | %.2fx | %s |\n", gs[g].name, median(ratio[g]), median(wall[g]), base/median(ratio[g]), same(audio[0], audio[g]))
	}
	if *profile == "" {
		return
	}
	for _, a := range flag.Args() {
		name, path, _ := strings.Cut(a, "=")
		prefix := filepath.Join(*profile, "go-profile-"+name)
		s, err := open(path, *threads, prefix)
		check(err)
		for _, it := range items {
			_, err := synth(s, it)
			check(err)
		}
		check(s.Destroy()) // ONNX Runtime writes the profile when the session ends
		matches, _ := filepath.Glob(prefix + "*.json")
		sort.Strings(matches)
		if len(matches) == 0 {
			fmt.Printf("  %s: no profile written\n", name)
			continue
		}
		summarise(name, matches[len(matches)-1])
	}
}

func summarise(name, path string) {
	raw, err := os.ReadFile(path)
	check(err)
	var ev []struct {
		Cat  string         `json:"cat"`
		Name string         `json:"name"`
		Dur  float64        `json:"dur"`
		Args map[string]any `json:"args"`
	}
	check(json.Unmarshal(raw, &ev))
	by := map[string]float64{}
	var total float64
	for _, e := range ev {
		if e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time") {
			op, _ := e.Args["op_name"].(string)
			by[op] += e.Dur
			total += e.Dur
		}
	}
	type kv struct {
		k string
		v float64
	}
	var l []kv
	for k, v := range by {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v })
	fmt.Printf("\n  profile %s (%s): %.1f s in kernels; top node types:\n", name, filepath.Base(path), total/1e6)
	for i, x := range l {
		if i == 8 {
			break
		}
		fmt.Printf("    %-24s %7.2f s %5.1f %%\n", x.k, x.v/1e6, 100*x.v/total)
	}
}

func same(a, b [][]float32) string {
	ident, lens := 0, 0
	maxd := 0.0
	for i := range a {
		if len(a[i]) == len(b[i]) {
			lens++
			eq := true
			for k := range a[i] {
				d := math.Abs(float64(a[i][k] - b[i][k]))
				maxd = math.Max(maxd, d)
				if d != 0 {
					eq = false
				}
			}
			if eq {
				ident++
			}
		}
	}
	if ident == len(a) {
		return "identical"
	}
	return fmt.Sprintf("%d/%d clips identical, %d/%d the same length (max |d| over those %.3g)", ident, len(a), lens, len(a), maxd)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
