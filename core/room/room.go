// Package room holds the acoustic conditions a dataset can be built in (docs/dataset.md,
// "Rooms"), stated once: the build (core/construct) simulates them, the run file
// (core/config) names them, the report describes them. It imports nothing, so the run
// file's checks link no plugin machinery.
package room

// Preset is an acoustic condition (docs/dataset.md, "Rooms"): a shoebox room, where
// the listening device is, where people sit or stand, and what plays in the background.
// The presets are stated once here; a set's manifest records the one it was built with.
type Preset struct {
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

// Presets are the acoustic conditions a dataset block can name.
var Presets = []Preset{
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

// Names lists the conditions a dataset block can name, clean first.
func Names() []string {
	names := []string{Clean}
	for _, p := range Presets {
		names = append(names, p.Name)
	}
	return names
}

// ByName is the preset called name.
func ByName(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
