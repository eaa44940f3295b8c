package measureasr

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/pluginhost"
	"github.com/duplexmpe/duplexmpe/plugins/lexical-judge/lexical"
	"github.com/duplexmpe/duplexmpe/sdk"
)

// TestMeasureConditionWER prints Whisper's word error rate on the request turns (T) of
// each built set named in MEASURE_ROOMS_SETS (directories, one per acoustic condition:
// `make measure-rooms`), each clip as the model hears it: a room's clip with a stretch
// of its background loop under it (from the pair's offset, a second further per turn),
// a clean set's clip alone. Words are compared after lexical.Normalize, as in
// TestMeasureASR.
func TestMeasureConditionWER(t *testing.T) {
	sets := strings.Fields(os.Getenv("MEASURE_ROOMS_SETS"))
	if os.Getenv("DUPLEXMPE_MEASURE_ASR") != "1" || len(sets) == 0 {
		t.Skip("set DUPLEXMPE_MEASURE_ASR=1 and MEASURE_ROOMS_SETS to measure (make measure-rooms)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	c, err := pluginhost.Start(ctx, pluginSpec(t, "whisper"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	if err := c.Configure(ctx, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	asr, err := c.ASR()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := c.Describe(ctx)
	fmt.Printf("\nWhisper %s on every T turn of each set, as the model hears it; WER after lexical.Normalize\n\n", info.Version)
	fmt.Printf("| condition | set | T clips | words | WER | examples |\n|---|---|---|---|---|---|\n")
	for _, dir := range sets {
		d, err := dataset.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var bed []float32
		if p := d.BackgroundPath(); p != "" {
			b, err := d.ReadClip(d.Manifest.Room.Background.Clip)
			if err != nil {
				t.Fatal(err)
			}
			bed = b.Samples
		}
		type item struct {
			text string
			pcm  sdk.Audio
		}
		var items []item
		for _, s := range d.Scenarios {
			for i, tu := range s.Turns {
				if tu.Label != "T" {
					continue
				}
				p, err := d.ReadClip(tu.Clip)
				if err != nil {
					t.Fatal(err)
				}
				x := append([]float32(nil), p.Samples...)
				if n := len(bed); n > 0 {
					at := dataset.BedOffset(s.PairID, n) + i*p.Rate
					for j := range x {
						x[j] += bed[(at+j)%n]
					}
				}
				items = append(items, item{tu.Text, sdk.Audio{Samples: x, Rate: p.Rate}})
			}
		}
		audios := make([]sdk.Audio, len(items))
		for i, it := range items {
			audios[i] = it.pcm
		}
		got, errs := transcribeAll(ctx, asr, audios)
		var e, words int
		var examples []string
		for i, it := range items {
			if errs[i] != nil {
				t.Fatalf("%s: %v", dir, errs[i])
			}
			ref, hyp := lexical.Normalize(it.text), lexical.Normalize(got[i])
			n := wordErrors(ref, hyp)
			e += n
			words += len(ref)
			if n > 2 && len(examples) < 2 {
				examples = append(examples, fmt.Sprintf("%q -> %q", it.text, got[i]))
			}
		}
		fmt.Printf("| %s | %s | %d | %d | %.3f (%d/%d) | %s |\n", d.Acoustics(), d.Dir, len(items), words, float64(e)/float64(words), e, words, strings.Join(examples, "; "))
	}
	fmt.Println()
}
