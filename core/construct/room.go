package construct

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/duplexmpe/duplexmpe/core/atomicfile"
	"github.com/duplexmpe/duplexmpe/core/audio"
	"github.com/duplexmpe/duplexmpe/core/dataset"
	"github.com/duplexmpe/duplexmpe/core/room"
)

// RoomSpec is a build's acoustic condition.
type RoomSpec struct {
	Preset room.Preset
	Seed   int64
	// Simulator is the command that runs tools/rooms/rir.py (tools/rooms/run.sh).
	Simulator []string
}

// DrawSeats gives each pair's speakers distinct seats of the preset, drawn by seed and
// the pair alone: the same in both versions of a pair, in a partial build and in a full
// one, and unrelated to who speaks which turn.
func DrawSeats(scs []dataset.Scenario, p room.Preset, seed int64) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	for _, s := range scs {
		if _, done := out[s.PairID]; done {
			continue
		}
		if len(s.Speakers) > len(p.SeatsM) {
			return nil, fmt.Errorf("room %s: scenario %s has %d speakers but the room has %d seats", p.Name, s.ScenarioID, len(s.Speakers), len(p.SeatsM))
		}
		h := fnv.New64a()
		fmt.Fprintf(h, "duplexmpe-seats\x00%d\x00%s", seed, s.PairID)
		order := rand.New(rand.NewSource(int64(h.Sum64() >> 1))).Perm(len(p.SeatsM))
		speakers := append([]string(nil), s.Speakers...)
		sort.Strings(speakers)
		m := map[string]int{}
		for i, sp := range speakers {
			m[sp] = order[i]
		}
		out[s.PairID] = m
	}
	return out, nil
}

// roomAcoustics is what the simulator made of a preset at a sample rate: an impulse
// response per seat and one from the background's source, each with its file and hash.
type roomAcoustics struct {
	room   dataset.Room
	seats  [][]float64 // per seat
	source []float64   // from the background's source
}

// simRequest is what tools/rooms/rir.py reads.
type simRequest struct {
	FS      int          `json:"fs"`
	Dims    [3]float64   `json:"dims"`
	RT60    float64      `json:"rt60"`
	Device  [3]float64   `json:"device"`
	Sources [][3]float64 `json:"sources"`
}

// simReply is what it writes (the responses are kept apart, in files).
type simReply struct {
	Simulator        string      `json:"simulator"`
	EnergyAbsorption float64     `json:"energy_absorption"`
	MaxOrder         int         `json:"max_order"`
	RIRs             [][]float64 `json:"rirs,omitempty"`
	RT60Measured     []float64   `json:"rt60_measured"`
}

// RoomsDir holds a room set's impulse responses, keyed by what they were simulated from.
const RoomsDir = "rooms"

// acoustics loads the preset's impulse responses at rate from out/rooms, simulating them
// first when they are not there (the simulator runs once per preset and rate; a rebuild
// reads the files, so the clips' keys, which hold the responses' hashes, stay put).
func acoustics(ctx context.Context, out string, spec RoomSpec, rate int) (*roomAcoustics, error) {
	p := spec.Preset
	req := simRequest{FS: rate, Dims: p.DimsM, RT60: p.RT60S, Device: p.DeviceM, Sources: append(append([][3]float64(nil), p.SeatsM...), p.SourceM)}
	reqJSON, _ := json.Marshal(req)
	sum := sha256.Sum256(reqJSON)
	key := hex.EncodeToString(sum[:8])
	dir := filepath.Join(out, RoomsDir)
	meta := filepath.Join(dir, key+".json")
	fileOf := func(i int) string { return fmt.Sprintf("%s/%s-%d.f32", RoomsDir, key, i) }

	// load reads the responses kept in the set; they are what every build uses, the
	// first one included, so a rebuild gets the same numbers.
	var rep simReply
	rirs := make([][]float64, len(req.Sources))
	load := func() error {
		raw, err := os.ReadFile(meta)
		if err == nil {
			err = json.Unmarshal(raw, &rep)
		}
		if err == nil && len(rep.RT60Measured) != len(req.Sources) {
			err = fmt.Errorf("%s describes %d responses, not %d", meta, len(rep.RT60Measured), len(req.Sources))
		}
		for i := 0; err == nil && i < len(rirs); i++ {
			rirs[i], err = readF32(filepath.Join(out, filepath.FromSlash(fileOf(i))))
		}
		return err
	}
	if load() != nil {
		sim, err := simulate(ctx, spec.Simulator, reqJSON, len(req.Sources))
		if err != nil {
			return nil, fmt.Errorf("room %s: %w", p.Name, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for i, h := range sim.RIRs {
			if err := atomicfile.WriteFile(filepath.Join(out, filepath.FromSlash(fileOf(i))), f32Bytes(h)); err != nil {
				return nil, err
			}
		}
		sim.RIRs = nil
		b, _ := json.MarshalIndent(sim, "", "  ")
		if err := atomicfile.WriteFile(meta, append(b, '\n')); err != nil {
			return nil, err
		}
		if err := load(); err != nil {
			return nil, fmt.Errorf("room %s: the responses just written do not read back: %w", p.Name, err)
		}
	}
	a := &roomAcoustics{seats: rirs[:len(p.SeatsM)], source: rirs[len(p.SeatsM)]}
	seat := func(i int) dataset.Seat {
		s := sha256.Sum256(f32Bytes(rirs[i]))
		return dataset.Seat{PositionM: req.Sources[i], DistanceM: round3(dist(req.Sources[i], p.DeviceM)),
			RIR: fileOf(i), RIRSHA256: hex.EncodeToString(s[:]), RT60MeasuredS: round3(rep.RT60Measured[i])}
	}
	a.room = dataset.Room{Preset: p.Name, Simulator: rep.Simulator + " (image source method)", DimsM: p.DimsM, RT60S: p.RT60S,
		EnergyAbsorption: round3(rep.EnergyAbsorption), MaxOrder: rep.MaxOrder, DeviceM: p.DeviceM}
	for i := range p.SeatsM {
		a.room.Seats = append(a.room.Seats, seat(i))
	}
	if p.Background != "" {
		a.room.Background = &dataset.Background{Kind: p.Background, Source: seat(len(p.SeatsM)), SNRdB: p.SNRdB}
	}
	return a, nil
}

// simulate runs the simulator on one request.
func simulate(ctx context.Context, cmd []string, req []byte, n int) (simReply, error) {
	var rep simReply
	if len(cmd) == 0 {
		return rep, errors.New("no room simulator: tools/rooms/run.sh was not found (run from the repository, or set DUPLEXMPE_ROOM_SIMULATOR)")
	}
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return rep, fmt.Errorf("the room simulator %s failed (%v): %s", strings.Join(cmd, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return rep, fmt.Errorf("the room simulator %s wrote no reply it can read: %v", strings.Join(cmd, " "), err)
	}
	if len(rep.RIRs) != n || len(rep.RT60Measured) != n || rep.Simulator == "" {
		return rep, fmt.Errorf("the room simulator %s answered %d responses for %d sources", strings.Join(cmd, " "), len(rep.RIRs), n)
	}
	for i, h := range rep.RIRs {
		if len(h) == 0 || firstNonFinite64(h) >= 0 {
			return rep, fmt.Errorf("the room simulator's response %d is empty or not finite", i)
		}
	}
	return rep, nil
}

func firstNonFinite64(x []float64) int {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return i
		}
	}
	return -1
}

func f32Bytes(x []float64) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	}
	return b
}

func readF32(path string) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || len(b)%4 != 0 {
		return nil, fmt.Errorf("%s: not a float32 impulse response (%d bytes)", path, len(b))
	}
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	if firstNonFinite64(out) >= 0 {
		return nil, fmt.Errorf("%s: a sample is not finite", path)
	}
	return out, nil
}

func dist(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// reverbTail is how many samples of the response to keep after the dry clip ends: up
// to where the energy still to come falls 40 dB under the whole (Schroeder's backward
// integral), so the tail is audible reverberation and not seconds of numerical floor.
func reverbTail(h []float64) int {
	var total float64
	for _, v := range h {
		total += v * v
	}
	rest := total
	for i, v := range h {
		rest -= v * v
		if rest <= total*1e-4 {
			return i + 1
		}
	}
	return len(h)
}

// Reverberate is x through the impulse response h (FFT convolution), cut at len(x) +
// reverbTail(h) samples with a 10 ms fade at the cut.
func Reverberate(x []float32, h []float64) []float32 {
	n := len(x) + len(h) - 1
	size := 1
	for size < n {
		size <<= 1
	}
	fft := fourier.NewFFT(size)
	xs := make([]float64, size)
	for i, v := range x {
		xs[i] = float64(v)
	}
	hs := make([]float64, size)
	copy(hs, h)
	X := fft.Coefficients(nil, xs)
	H := fft.Coefficients(nil, hs)
	for i := range X {
		X[i] *= H[i]
	}
	y := fft.Sequence(nil, X)
	keep := min(n, len(x)+reverbTail(h))
	out := make([]float32, keep)
	scale := 1 / float64(size)
	for i := range out {
		out[i] = float32(y[i] * scale)
	}
	fade := min(keep, 240) // 10 ms at 24 kHz
	for i := 0; i < fade; i++ {
		out[keep-1-i] *= float32(i) / float32(fade)
	}
	return out
}

// RoomClipKey is the content address of a turn's clip in a room: the dry clip's key,
// the impulse response's hash and the loudness target.
func RoomClipKey(dryKey, rirSHA string, lufs float64) string {
	h := sha256.New()
	fmt.Fprintf(h, "duplexmpe-room-clip-v1\x00%s\x00%s\x00%g", dryKey, rirSHA, lufs)
	return hex.EncodeToString(h.Sum(nil))
}

// Background bed.

// BedSeconds is the length of a background loop: long enough that no conversation hears
// a stretch of it twice within a minute, and not a multiple of anything the schedule
// uses.
const BedSeconds = 47.0

// bedFade is the crossfade joining the loop's end to its start.
const bedFade = 1.0

// BabbleLines are the sentences the babble of a room is made of: the project's own
// text, everyday talk with no request for an assistant and no name, so nothing in the
// bed is a turn of any scenario.
var BabbleLines = []string{
	"I think the bakery on the corner closes early on Sundays now.",
	"We drove up to the lake last weekend and it rained the whole time.",
	"My sister finally painted the hallway, a sort of pale green.",
	"The new season of that baking show starts next month.",
	"He said the train was twenty minutes late again this morning.",
	"We should plant the tomatoes before the end of April.",
	"The concert was good, but the seats were far too close to the speakers.",
	"I keep forgetting to return those library books.",
	"Their dog learned to open the garden gate by itself.",
	"The market had the best strawberries I've had all year.",
	"She's thinking about learning the cello after all this time.",
	"The roof of the shed needs new felt before winter.",
	"We watched the whole film and nobody could remember the ending.",
	"My neighbour's kids built a tree house out of old pallets.",
	"The café by the station does a very good soup on Fridays.",
	"I read that the bridge will be closed for repairs in the summer.",
}

// babbleVoices is the voice of each babble line: the pool's voices in turn, or the
// fixed map's.
func babbleVoices(pool *dataset.VoicePool, voices map[string]string) []string {
	var vs []string
	if pool != nil {
		vs = dataset.SortedKeys(pool.F0)
	} else {
		for _, sp := range dataset.SortedKeys(voices) {
			vs = append(vs, voices[sp])
		}
	}
	out := make([]string, len(BabbleLines))
	for i := range out {
		out[i] = vs[(i*5)%len(vs)]
	}
	return out
}

// BedKey is the content address of a background loop: everything it is made from.
func BedKey(kind string, seed int64, rate int, lufs, snr float64, sourceSHA string, lines []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "duplexmpe-bed-v1\x00%s\x00%d\x00%d\x00%g\x00%g\x00%g\x00%s", kind, seed, rate, lufs, snr, BedSeconds, sourceSHA)
	for _, l := range lines {
		fmt.Fprintf(h, "\x00%s", l)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// makeBed is the background loop of kind at rate: made (babble from the dry clips of
// BabbleLines, the others synthesised from seeded noise), played from the background's
// source through the room, joined end to start with a crossfade (the build sets its level: speech minus the SNR).
func makeBed(kind string, seed int64, rate int, babble []audio.PCM, source []float64) (audio.PCM, error) {
	n := int(math.Round((BedSeconds + bedFade) * float64(rate)))
	rng := rand.New(rand.NewSource(seed))
	dry := make([]float32, n)
	switch kind {
	case "babble":
		if len(babble) == 0 {
			return audio.PCM{}, errors.New("babble: no lines")
		}
		// Four people talking at once, each through the lines in its own order.
		for k := 0; k < 4; k++ {
			pos := int(float64(k) * 2.3 * float64(rate))
			for pos < n {
				for _, i := range rng.Perm(len(babble)) {
					c := babble[i].Samples
					for j := 0; j < len(c) && pos+j < n; j++ {
						dry[pos+j] += c[j]
					}
					pos += len(c) + int((0.25+0.55*rng.Float64())*float64(rate))
					if pos >= n {
						break
					}
				}
			}
		}
	case "appliance":
		// A fridge's mains hum (50 Hz and its harmonics, slowly wavering) and a hood's fan
		// (white noise band-limited to about 150-2500 Hz).
		phases := make([]float64, 8)
		for i := range phases {
			phases[i] = 2 * math.Pi * rng.Float64()
		}
		hp, lp := onePole(150, rate), onePole(2500, rate)
		var lo, hi float64
		for j := range dry {
			t := float64(j) / float64(rate)
			var hum float64
			for k := 1; k <= 8; k++ {
				hum += math.Sin(2*math.Pi*50*float64(k)*t+phases[k-1]) / math.Pow(float64(k), 1.2)
			}
			hum *= 1 + 0.1*math.Sin(2*math.Pi*0.3*t)
			w := rng.NormFloat64()
			lo += hp * (w - lo) // lo follows w below 150 Hz
			hi += lp * ((w - lo) - hi)
			dry[j] = float32(0.3*hum + hi)
		}
	case "road":
		// Tyre and engine rumble: brown noise (integrated white) above 20 Hz, a band of
		// tyre noise up to 1.2 kHz, and a slow swell.
		dc, lp := onePole(20, rate), onePole(1200, rate)
		var brown, base, band float64
		for j := range dry {
			t := float64(j) / float64(rate)
			w := rng.NormFloat64()
			brown = 0.999*brown + 0.05*w
			base += dc * (brown - base)
			band += lp * (w - band)
			dry[j] = float32((brown-base)*(1+0.15*math.Sin(2*math.Pi*0.07*t)) + 0.25*band)
		}
	default:
		return audio.PCM{}, fmt.Errorf("unknown background %q", kind)
	}
	wet := Reverberate(dry, source)[:n]
	// Join the end to the start: the loop's last bedFade seconds fade into its first.
	loop := int(math.Round(BedSeconds * float64(rate)))
	fade := n - loop
	out := make([]float32, loop)
	copy(out, wet[:loop])
	for i := 0; i < fade; i++ {
		a := float32(i) / float32(fade)
		out[i] = a*wet[i] + (1-a)*wet[loop+i]
	}
	return audio.PCM{Samples: out, Rate: rate}, nil
}

// onePole is the coefficient of a one-pole low-pass at fc Hz.
func onePole(fc float64, rate int) float64 {
	return 1 - math.Exp(-2*math.Pi*fc/float64(rate))
}

// planRoom adds a room's work to a build: the babble's lines to the dry clips (through
// addJob), and, in the order returned, each turn's clip through its speaker's seat and
// the background loop, to be made after the dry clips. It points keys at the room's
// clips and returns what the manifest records.
func planRoom(ctx context.Context, spec BuildSpec, all, scenarios []dataset.Scenario, rate int, lufs float64, voices map[string]string,
	keys [][]string, jobs map[string]*clipJob, addJob func(voice, text string) string) (*dataset.Room, []string, error) {
	rs := spec.Room
	seats, err := DrawSeats(all, rs.Preset, rs.Seed)
	if err != nil {
		return nil, nil, err
	}
	ac, err := acoustics(ctx, spec.Out, *rs, rate)
	if err != nil {
		return nil, nil, err
	}
	room := ac.room
	room.Seed, room.PairSeats = rs.Seed, seats
	readDry := func(rel string) (audio.PCM, error) {
		p, err := audio.ReadWAV(filepath.Join(spec.Out, filepath.FromSlash(rel)))
		if err != nil {
			return p, fmt.Errorf("reading the dry clip %s: %w", rel, err)
		}
		return p, nil
	}
	var order []string
	for i, s := range scenarios {
		for j, t := range s.Turns {
			seat := seats[s.PairID][t.Speaker]
			dry := jobs[keys[i][j]]
			key := RoomClipKey(keys[i][j], room.Seats[seat].RIRSHA256, lufs)
			if _, ok := jobs[key]; !ok {
				h := ac.seats[seat]
				jobs[key] = &clipJob{voice: dry.voice, text: dry.text, rel: ClipRel(key), make: func() (audio.PCM, error) {
					x, err := readDry(dry.rel)
					if err != nil {
						return x, err
					}
					return audio.PCM{Samples: Reverberate(x.Samples, h), Rate: x.Rate}, nil
				}}
				order = append(order, key)
			}
			keys[i][j] = key
		}
	}
	if bg := room.Background; bg != nil {
		var lines []*clipJob
		var lineKeys []string
		if bg.Kind == "babble" {
			vs := babbleVoices(spec.VoicePool, voices)
			for i, l := range BabbleLines {
				k := addJob(vs[i], l)
				lines, lineKeys = append(lines, jobs[k]), append(lineKeys, k)
			}
		}
		key := BedKey(bg.Kind, rs.Seed, rate, lufs, bg.SNRdB, bg.Source.RIRSHA256, lineKeys)
		src, kind, seed, snr := ac.source, bg.Kind, rs.Seed, bg.SNRdB
		jobs[key] = &clipJob{text: "the " + bg.Kind + " background", rel: ClipRel(key), bed: true, loudness: lufs - snr, make: func() (audio.PCM, error) {
			var babble []audio.PCM
			for _, l := range lines {
				p, err := readDry(l.rel)
				if err != nil {
					return p, err
				}
				babble = append(babble, p)
			}
			return makeBed(kind, seed, rate, babble, src)
		}}
		order = append(order, key)
		bg.Clip, bg.LoudnessLUFS = ClipRel(key), lufs-bg.SNRdB
	}
	return &room, order, nil
}

// bedKeyOf is the key of a room's background loop.
func bedKeyOf(room *dataset.Room) string {
	return strings.TrimSuffix(strings.TrimPrefix(room.Background.Clip, dataset.ClipsDir+"/"), ".wav")
}
