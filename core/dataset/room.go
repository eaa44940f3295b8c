package dataset

import (
	"fmt"
	"hash/fnv"

	"github.com/duplexmpe/duplexmpe/core/audio"
)

// Room is the acoustic condition a set was built under (docs/dataset.md, "Rooms"): each
// speaker's clips pass through the impulse response from the speaker's seat to the
// listening device, and a background bed plays under the whole conversation. A set built
// without one is "clean": dry clips, no bed. room.Presets (core/room) owns the presets; this
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

// ReadBackground reads the set's background loop; none (no samples) for a set without
// one. The error names the room.
func (d *Dataset) ReadBackground() (audio.PCM, error) {
	if d.BackgroundPath() == "" {
		return audio.PCM{}, nil
	}
	p, err := d.ReadClip(d.Manifest.Room.Background.Clip)
	if err != nil {
		return p, fmt.Errorf("the dataset's background (room %s): %w", d.Acoustics(), err)
	}
	return p, nil
}

// Acoustics names the acoustic condition of the set: its room preset, or "clean".
func (d *Dataset) Acoustics() string {
	if d.Manifest == nil || d.Manifest.Room == nil {
		return "clean"
	}
	return d.Manifest.Room.Preset
}
