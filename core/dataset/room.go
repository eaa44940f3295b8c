package dataset

import (
	"hash/fnv"
)

// Room is the acoustic condition a set was built under (docs/dataset.md, "Rooms"): each
// speaker's clips pass through the impulse response from the speaker's seat to the
// listening device, and a background bed plays under the whole conversation. A set built
// without one is "clean": dry clips, no bed. construct.RoomPresets owns the presets; this
// is what the manifest records of the one used, so the condition is named and
// reproducible from the set alone.
type Room struct {
	Preset string `json:"preset"`
	// Seed draws the seats of each pair's speakers (the same in both versions).
	Seed int64 `json:"seed"`
	// Simulator names the image-source simulator and its version.
	Simulator string `json:"simulator"`
	// The shoebox room: its size, the target RT60 and what Sabine's formula made of it.
	DimsM            [3]float64 `json:"dims_m"`
	RT60S            float64    `json:"rt60_s"`
	EnergyAbsorption float64    `json:"energy_absorption"`
	MaxOrder         int        `json:"max_order"`
	DeviceM          [3]float64 `json:"device_m"`
	Seats            []Seat     `json:"seats"`
	// PairSeats is each pair's speaker -> index into Seats.
	PairSeats map[string]map[string]int `json:"pair_seats"`
	// Background is the bed under every conversation; nil when the preset has none.
	Background *Background `json:"background,omitempty"`
}

// Seat is a place in the room and its impulse response to the device.
type Seat struct {
	PositionM [3]float64 `json:"position_m"`
	DistanceM float64    `json:"distance_m"`
	// RIR is the impulse response's file (raw little-endian float32 at the set's sample
	// rate) relative to the dataset directory, and RIRSHA256 its hash.
	RIR           string  `json:"rir"`
	RIRSHA256     string  `json:"rir_sha256"`
	RT60MeasuredS float64 `json:"rt60_measured_s"`
}

// Background is the sound under every conversation of a room: a loop, played from an
// offset drawn per pair (BedOffset), at SNRdB below the speech's loudness.
type Background struct {
	// Kind is what it is made of: "babble" (the project's own sentences, spoken by the
	// set's voices, several at once from another corner of the room), "appliance" (a
	// mains hum and a fan's broadband noise) or "road" (a car's low rumble).
	Kind string `json:"kind"`
	// SourceM is where it plays from; its impulse response is Source.
	Source Seat `json:"source"`
	// Clip is the loop (a clip of the set, 16-bit PCM) and DurationS its length.
	Clip      string  `json:"clip"`
	DurationS float64 `json:"duration_s"`
	// SNRdB is the speech loudness (the set's) minus the bed's, both BS.1770.
	SNRdB        float64 `json:"snr_db"`
	LoudnessLUFS float64 `json:"loudness_lufs"`
}

// BedOffset is the sample of a background loop of n samples at which pair's
// conversations start it: a fixed function of the pair, so both versions of a pair
// hear the same background at the same moments, and different pairs hear different
// stretches of it.
func BedOffset(pair string, n int) int {
	if n <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte("duplexmpe-bed-offset\x00" + pair))
	return int(h.Sum64() % uint64(n))
}

// BackgroundPath is the background loop's file path, or "" when the set has none.
func (d *Dataset) BackgroundPath() string {
	if d.Manifest == nil || d.Manifest.Room == nil || d.Manifest.Room.Background == nil {
		return ""
	}
	return d.ClipPath(d.Manifest.Room.Background.Clip)
}

// Acoustics names the acoustic condition of the set: its room preset, or "clean".
func (d *Dataset) Acoustics() string {
	if d.Manifest == nil || d.Manifest.Room == nil {
		return "clean"
	}
	return d.Manifest.Room.Preset
}

// RoomPreset is an acoustic condition (docs/dataset.md, "Rooms"): a shoebox room, where
// the listening device is, where people sit or stand, and what plays in the background.
// The presets are stated once here; a set's manifest records the one it was built with.
type RoomPreset struct {
	Name    string
	DimsM   [3]float64
	RT60S   float64
	DeviceM [3]float64
	SeatsM  [][3]float64
	// Background is what the bed is made of (dataset.Background.Kind), from SourceM, at
	// SNRdB below the speech.
	Background string
	SourceM    [3]float64
	SNRdB      float64
	// About is one line for the docs and the report.
	About string
}

// Clean is the condition of a set built without a room: the dry clips, no background.
const Clean = "clean"

// RoomPresets are the acoustic conditions a dataset block can name.
var RoomPresets = []RoomPreset{
	{
		Name: "living-room", DimsM: [3]float64{5.5, 4.5, 2.7}, RT60S: 0.45,
		DeviceM: [3]float64{2.75, 2.0, 0.6}, // on the coffee table
		SeatsM: [][3]float64{
			{2.1, 3.3, 1.0}, {3.4, 3.3, 1.0}, // the sofa
			{1.0, 1.8, 1.0}, {4.5, 1.9, 1.0}, // two armchairs
			{3.9, 0.7, 1.6}, // standing by the door
		},
		Background: "babble", SourceM: [3]float64{0.5, 0.4, 1.2}, SNRdB: 15,
		About: "5.5 x 4.5 x 2.7 m, RT60 0.45 s, people 1.5-2.0 m from the device, other people talking in a corner at 15 dB SNR",
	},
	{
		Name: "kitchen", DimsM: [3]float64{4.2, 3.4, 2.5}, RT60S: 0.7,
		DeviceM: [3]float64{0.45, 1.7, 0.95}, // on the counter
		SeatsM: [][3]float64{
			{2.2, 1.2, 1.15}, {3.0, 1.2, 1.15}, {2.6, 2.4, 1.15}, // round the table
			{1.0, 2.9, 1.6}, // standing at the stove
		},
		Background: "appliance", SourceM: [3]float64{0.5, 3.0, 0.9}, SNRdB: 10,
		About: "4.2 x 3.4 x 2.5 m of hard surfaces, RT60 0.7 s, people 1.5-2.6 m away, a fridge's hum and a hood's fan at 10 dB SNR",
	},
	{
		Name: "car", DimsM: [3]float64{2.6, 1.6, 1.2}, RT60S: 0.12,
		DeviceM: [3]float64{0.35, 0.8, 0.85}, // on the dashboard
		SeatsM: [][3]float64{
			{1.1, 0.45, 0.95}, {1.1, 1.15, 0.95}, // front
			{2.0, 0.45, 0.95}, {2.0, 1.15, 0.95}, // back
		},
		Background: "road", SourceM: [3]float64{1.3, 0.8, 0.1}, SNRdB: 5,
		About: "a 2.6 x 1.6 x 1.2 m cabin, RT60 0.12 s, people 0.8-1.7 m away, road noise at 5 dB SNR",
	},
}

// RoomPresetNames lists the conditions a dataset block can name, clean first.
func RoomPresetNames() []string {
	names := []string{Clean}
	for _, p := range RoomPresets {
		names = append(names, p.Name)
	}
	return names
}

// RoomPresetByName is the preset called name.
func RoomPresetByName(name string) (RoomPreset, bool) {
	for _, p := range RoomPresets {
		if p.Name == name {
			return p, true
		}
	}
	return RoomPreset{}, false
}
