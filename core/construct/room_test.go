package construct

import (
	"context"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/room"
)

// Reverberate is the convolution of the clip with the response, cut after the tail.
func TestReverberateIsConvolution(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := make([]float32, 900)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	h := make([]float64, 400)
	for i := range h {
		h[i] = rng.NormFloat64() * math.Exp(-float64(i)/40)
	}
	got := Reverberate(x, h)
	tail := reverbTail(h)
	if len(got) != len(x)+tail || tail <= 0 || tail >= len(h) {
		t.Fatalf("%d samples out, tail %d of %d: want len(x) + tail, the tail shorter than the response", len(got), tail, len(h))
	}
	fade := min(len(got), 240)
	for n := 0; n < len(got)-fade; n++ {
		var want float64
		for k := 0; k < len(h) && k <= n; k++ {
			if n-k < len(x) {
				want += h[k] * float64(x[n-k])
			}
		}
		if math.Abs(float64(got[n])-want) > 1e-4*(1+math.Abs(want)) {
			t.Fatalf("sample %d = %g, direct convolution %g", n, got[n], want)
		}
	}
	if got[len(got)-1] != 0 {
		t.Errorf("the last sample %g is not faded to 0", got[len(got)-1])
	}
}

// The tail keeps the response until 40 dB of its energy is left.
func TestReverbTailStopsFortyDecibelsDown(t *testing.T) {
	h := make([]float64, 10000)
	for i := range h {
		h[i] = math.Pow(10, -float64(i)/1000) // energy falls 20 dB per 1000 samples: 40 dB by 2000
	}
	if n := reverbTail(h); n < 1990 || n > 2010 {
		t.Errorf("tail %d samples, want about 2000", n)
	}
}

// Seats: distinct within a pair, the same in both versions, the same in any subset of
// the set, and spread over every seat across pairs.
func TestDrawSeats(t *testing.T) {
	scs, err := Generate(GenerateSpec{Pairs: 40, Seed: 2, FourSpeakerShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := room.ByName("living-room")
	seats, err := DrawSeats(scs, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]int{}
	for pair, m := range seats {
		seen := map[int]bool{}
		for sp, s := range m {
			if s < 0 || s >= len(p.SeatsM) || seen[s] {
				t.Fatalf("pair %s: speaker %s at seat %d (seats %v)", pair, sp, s, m)
			}
			seen[s] = true
			used[s]++
		}
	}
	if len(used) != len(p.SeatsM) {
		t.Errorf("seats used %v: every seat should be drawn", used)
	}
	sub, _ := FirstPairs(scs, 3)
	again, _ := DrawSeats(sub, p, 1)
	for pair, m := range again {
		for sp, s := range m {
			if seats[pair][sp] != s {
				t.Fatalf("pair %s speaker %s: seat %d in a partial draw, %d in the full one", pair, sp, s, seats[pair][sp])
			}
		}
	}
	other, _ := DrawSeats(scs, p, 2)
	same := 0
	for pair := range seats {
		if other[pair]["A"] == seats[pair]["A"] {
			same++
		}
	}
	if same == len(seats) {
		t.Error("another seed drew the same seats")
	}
	car, _ := room.ByName("car")
	car.SeatsM = car.SeatsM[:2]
	if _, err := DrawSeats(scs, car, 1); err == nil {
		t.Error("a room with fewer seats than speakers was accepted")
	}
}

// simulator is the repository's room simulator, or a skip naming what to install.
func simulator(t *testing.T) []string {
	t.Helper()
	run, _ := filepath.Abs("../../tools/rooms/run.sh")
	py, _ := filepath.Abs("../../.venv-rooms/bin/python")
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("DUPLEXMPE_REQUIRE_ROOMS") != "" {
			t.Fatalf("%s is missing: make deps-rooms", py)
		}
		t.Skip(".venv-rooms is missing: make deps-rooms installs pyroomacoustics")
	}
	return []string{run}
}

// The real simulator: every preset's responses arrive at the speed of sound, fall with
// distance, decay at about the preset's RT60, and are read back from the set's files
// without the simulator the second time.
func TestAcousticsFromPyroomacoustics(t *testing.T) {
	sim := simulator(t)
	for _, p := range room.Presets {
		t.Run(p.Name, func(t *testing.T) {
			out := t.TempDir()
			const rate = 16000
			a, err := acoustics(context.Background(), out, RoomSpec{Preset: p, Seed: 1, Simulator: sim}, rate)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.seats) != len(p.SeatsM) || a.source == nil || len(a.room.Seats) != len(p.SeatsM) || a.room.Background == nil {
				t.Fatalf("acoustics %+v", a.room)
			}
			for i, h := range a.seats {
				var peak float64
				for _, v := range h {
					peak = math.Max(peak, math.Abs(v))
				}
				arrival := 0
				for arrival < len(h) && math.Abs(h[arrival]) < 0.2*peak {
					arrival++
				}
				d := a.room.Seats[i].DistanceM
				// The direct path: d / 343 m/s, plus the simulator's fractional-delay
				// filter (40 samples), at an amplitude of at most 1/d (pyroomacoustics
				// scales each image by 1/distance; the sinc spreads it).
				want := d/343*rate + 40
				if math.Abs(float64(arrival)-want) > 3 {
					t.Errorf("seat %d at %.2f m: the sound arrives at sample %d, want about %.0f", i, d, arrival, want)
				}
				var direct float64
				for j := max(0, arrival-2); j < min(len(h), arrival+3); j++ {
					direct = math.Max(direct, h[j])
				}
				if direct > 1.05/d || direct < 0.4/d {
					t.Errorf("seat %d: direct path amplitude %g, want at most 1/d = %g", i, direct, 1/d)
				}
				if rt := a.room.Seats[i].RT60MeasuredS; rt < 0.6*p.RT60S || rt > 1.6*p.RT60S {
					t.Errorf("seat %d: measured RT60 %.3f s, preset %.2f s", i, rt, p.RT60S)
				}
			}
			// A second load reads the files: no simulator needed, the same numbers.
			b, err := acoustics(context.Background(), out, RoomSpec{Preset: p, Seed: 1, Simulator: []string{"/nonexistent"}}, rate)
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.room.Seats {
				if a.room.Seats[i].RIRSHA256 != b.room.Seats[i].RIRSHA256 {
					t.Fatalf("seat %d: the response read back differs from the one simulated", i)
				}
			}
		})
	}
}

// A broken simulator is named, with what it said.
func TestAcousticsNamesABrokenSimulator(t *testing.T) {
	p, _ := room.ByName("kitchen")
	_, err := acoustics(context.Background(), t.TempDir(), RoomSpec{Preset: p, Simulator: []string{"sh", "-c", "echo pyroomacoustics is sad >&2; exit 2"}}, 16000)
	if err == nil || !contains(err.Error(), "pyroomacoustics is sad") || !contains(err.Error(), "kitchen") {
		t.Fatalf("error %v: want the preset and the simulator's words", err)
	}
	if _, err := acoustics(context.Background(), t.TempDir(), RoomSpec{Preset: p}, 16000); err == nil || !contains(err.Error(), "tools/rooms/run.sh") {
		t.Fatalf("no simulator: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A room build with the real flite and the real simulator: each turn's clip is its dry
// clip through its speaker's seat, every clip at the loudness target, the bed at the
// stated SNR, both versions of a pair at the same seats; a rebuild makes nothing; a
// clean build's clips are the room build's dry clips.
func TestBuildInARoom(t *testing.T) {
	tts, info := startFlite(t)
	sim := simulator(t)
	scs, err := Generate(GenerateSpec{Pairs: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := room.ByName("living-room")
	clean := t.TempDir()
	cspec := BuildSpec{Name: "t", Out: clean, Scenarios: scs, Generator: dataset.Generator{Kind: "procedural"}, TTS: info}
	cd, _, err := Build(context.Background(), cspec, tts, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The room build takes the clean build's clips and synthesises only the babble.
	out := t.TempDir()
	spec := cspec
	spec.Out, spec.ReuseFrom, spec.Room = out, []string{clean}, &RoomSpec{Preset: p, Seed: 1, Simulator: sim}
	first := &counting{TTS: tts}
	d, rep, err := Build(context.Background(), spec, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := int(first.calls.Load()); n != len(BabbleLines) {
		t.Errorf("the room build synthesised %d clips; with the clean build to reuse, only the %d babble lines", n, len(BabbleLines))
	}
	// The report says which: the babble lines synthesised, every turn and the loop simulated.
	if rep.Synthesised != len(BabbleLines) || rep.Simulated == 0 || rep.Synthesised+rep.Simulated+rep.Reused != rep.Clips {
		t.Errorf("report %+v: want %d synthesised, the rest simulated or reused", rep, len(BabbleLines))
	}
	rm := d.Manifest.Room
	if rm == nil || rm.Preset != "living-room" || rm.Background == nil || rm.Background.Kind != "babble" || len(rm.PairSeats) != 2 {
		t.Fatalf("manifest room %+v", rm)
	}
	if _, vs, err := dataset.ValidatePath(out); err != nil || len(vs) != 0 {
		t.Fatalf("the room set does not validate: %v %v", err, vs)
	}
	for i, s := range d.Scenarios {
		for j, tu := range s.Turns {
			dryClip := cd.Scenarios[i].Turns[j].Clip
			if tu.Clip == dryClip {
				t.Fatalf("%s turn %d plays the dry clip", s.ScenarioID, j)
			}
			// The dry clip is in the room set too, the same bytes as the clean build's.
			a, _ := os.ReadFile(filepath.Join(out, dryClip))
			b, _ := os.ReadFile(filepath.Join(clean, dryClip))
			if len(a) == 0 || string(a) != string(b) {
				t.Fatalf("%s turn %d: the room set's dry clip differs from the clean build's", s.ScenarioID, j)
			}
			seat := rm.PairSeats[s.PairID][tu.Speaker]
			wetPCM, err := audio.ReadWAV(filepath.Join(out, tu.Clip))
			if err != nil {
				t.Fatal(err)
			}
			dryPCM, _ := audio.ReadWAV(filepath.Join(clean, dryClip))
			h, _ := readF32(filepath.Join(out, rm.Seats[seat].RIR))
			if len(wetPCM.Samples) != len(dryPCM.Samples)+reverbTail(h) {
				t.Fatalf("%s turn %d: %d samples, want the dry %d + the tail %d", s.ScenarioID, j, len(wetPCM.Samples), len(dryPCM.Samples), reverbTail(h))
			}
			if l := audio.LoudnessLUFS(wetPCM); math.Abs(l-DefaultLoudness) > 0.5 {
				t.Errorf("%s turn %d at %.2f LUFS, want %g", s.ScenarioID, j, l, DefaultLoudness)
			}
		}
	}
	bed, err := audio.ReadWAV(filepath.Join(out, rm.Background.Clip))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bed.Duration()-BedSeconds) > 0.01 || math.Abs(audio.LoudnessLUFS(bed)-(DefaultLoudness-p.SNRdB)) > 0.5 {
		t.Errorf("bed %.2f s at %.2f LUFS, want %g s at %g", bed.Duration(), audio.LoudnessLUFS(bed), BedSeconds, DefaultLoudness-p.SNRdB)
	}
	// A rebuild makes nothing and runs no simulator.
	spec.Room = &RoomSpec{Preset: p, Seed: 1, Simulator: []string{"/nonexistent"}}
	ctr := &counting{TTS: tts}
	_, rep2, err := Build(context.Background(), spec, ctr, nil)
	if err != nil || rep2.Synthesised != 0 || rep2.Reused != rep.Clips || ctr.calls.Load() != 0 {
		t.Fatalf("rebuild: err %v, %+v (first %+v), TTS calls %d", err, rep2, rep, ctr.calls.Load())
	}
	// Another preset is another set of clips.
	k, _ := room.ByName("kitchen")
	kout := t.TempDir()
	kspec := spec
	kspec.Out, kspec.ReuseFrom, kspec.Room = kout, []string{out}, &RoomSpec{Preset: k, Seed: 1, Simulator: sim}
	kd, _, err := Build(context.Background(), kspec, tts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kd.Scenarios[0].Turns[0].Clip == d.Scenarios[0].Turns[0].Clip || kd.Manifest.Room.Background.Kind != "appliance" {
		t.Error("the kitchen's clips are the living room's")
	}
}
