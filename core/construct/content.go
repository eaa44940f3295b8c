package construct

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/duplexmpe/duplexmpe/core/protocol"
)

// The words of the procedural generator. Every line is written to be said aloud by
// people in a room; placeholders in braces are filled at render time.

var firstNames = []string{
	"Sam", "Maya", "Jordan", "Priya", "Leo", "Nina", "Marcus", "Elena", "Theo", "Grace",
	"Omar", "Chloe", "Daniel", "Rosa", "Ethan", "Hannah", "Felix", "Jade", "Victor", "Lucy",
}

var relationships = []string{
	"family", "roommates", "coworkers", "old friends", "neighbors", "classmates", "a couple and a friend",
}

type deviceSet struct {
	name string
	wake []string
}

var deviceSets = []deviceSet{
	{"Aria and a phone assistant", []string{"Hey Siri"}},
	{"Aria and a smart speaker", []string{"Alexa"}},
	{"Aria, a phone assistant and a smart TV", []string{"Hey Google", "Hey Siri"}},
	{"Aria and a smart speaker in the next room", []string{"Alexa"}},
}

type register struct {
	name   string
	prefix []string // openers for requests; "" keeps the request bare
}

var registers = []register{
	{"casual", []string{"", "", "Okay, ", "So, ", "Honestly, "}},
	{"hurried", []string{"", "Quick, ", "Come on, ", "Okay, fast, "}},
	{"playful", []string{"", "Alright, genius, ", "Ooh, ", "Okay okay, "}},
	{"polite", []string{"", "Sorry, ", "Just to check, ", "If you don't mind, "}},
}

func (c *cast) opener(rng *rand.Rand) string { return pick(rng, c.reg.prefix) }

// capFirst upper-cases the first letter.
func capFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// lowerFirst lower-cases the first letter, unless the first word is a name or "I".
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	word = strings.TrimSuffix(strings.TrimRight(word, ",.?!:"), "'s")
	if s == "" || word == "I" || word == "Aria" || slices.Contains(firstNames, word) {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// withOpener prefixes a request with the register's opener.
func (c *cast) withOpener(rng *rand.Rand, s string) string {
	o := c.opener(rng)
	if o == "" {
		return s
	}
	return o + lowerFirst(s)
}

// scene is an activity with the settings it happens in, the requests it can end in,
// and its own small talk.
type scene struct {
	activity string
	settings []string
	tasks    []func(*rand.Rand, *cast) task
	chores   []string // "{Y}, can you ...?"
	remarks  []string // one-liners to a named person
	self     []string // thinking aloud
	place    string   // where the assistant sits, for an implicit cue
	commands []string // commands to other devices; nil means the household ones
}

var scenes = []scene{
	{
		activity: "cooking dinner",
		settings: []string{"kitchen", "small apartment kitchen", "cabin kitchen"},
		tasks:    []func(*rand.Rand, *cast) task{ovenTask, recipeTask, costTask("the steaks", "steaks"), countTask("plates", "in the cupboard")},
		chores:   []string{"grab the colander", "taste this and tell me if it needs salt", "get the big pot down from the top shelf", "chop the onions", "set the table", "keep an eye on the rice"},
		remarks:  []string{"you're using way too much butter", "your phone keeps buzzing", "that smells amazing", "don't open the oven yet"},
		self:     []string{"Where is the garlic press...", "Salt, pepper... where did the paprika go?", "This pan is way too small for all of this.", "Did I already salt the water? I think I did.", "Hmm, it's not bubbling yet."},
		place:    "on the counter",
	},
	{
		activity: "planning a weekend trip",
		settings: []string{"living room", "dorm common room", "kitchen table"},
		tasks:    []func(*rand.Rand, *cast) task{driveTask, leaveTask("the ferry", "the ferry terminal"), splitTask("the cabin", "for both nights"), codeTask("booking reference", true)},
		chores:   []string{"pull up the map on your laptop", "check if the cabin lets us bring the dog", "find the charger for the camera", "text your cousin about borrowing the car", "write down what we still need to buy"},
		remarks:  []string{"you always overpack", "we're not bringing the inflatable kayak again", "I saw your hiking boots by the door", "your sister said she might come too"},
		self:     []string{"Where did I put the sunscreen...", "I really need a new suitcase.", "Do I even own hiking boots anymore?", "Okay, toothbrush, charger, passport... no, no passport needed."},
		place:    "on the shelf",
	},
	{
		activity: "getting ready for a night out",
		settings: []string{"apartment hallway", "living room", "hotel room"},
		tasks:    []func(*rand.Rand, *cast) task{leaveTask("the movie", "the theater"), leaveTask("our dinner reservation", "the restaurant"), nameTask("restaurant"), splitTask("the tickets", "for the show")},
		chores:   []string{"check if it's raining", "grab my jacket off the chair", "call a cab", "help me find my other shoe", "zip this up for me"},
		remarks:  []string{"that shirt looks great on you", "you've been in the bathroom for twenty minutes", "don't forget your keys this time", "you have lipstick on your teeth"},
		self:     []string{"Wallet, keys, phone. Okay.", "Where is my other earring...", "Ugh, this jacket has a stain on it.", "I should have ironed this."},
		place:    "by the door",
	},
	{
		activity: "board game night",
		settings: []string{"living room", "basement den", "dining room"},
		tasks:    []func(*rand.Rand, *cast) task{splitTask("the pizza", "with the tip"), countTask("points", "from the last round"), codeTask("wifi password", false)},
		chores:   []string{"shuffle the cards", "grab more chips from the kitchen", "read out the trading rules", "pass me the dice", "move your piece, it's your turn"},
		remarks:  []string{"you're definitely cheating", "it's your turn, come on", "that was a terrible trade", "you said that last game too"},
		self:     []string{"Okay, if I go here, then... no.", "I never win this game.", "Where did my last card go?", "Three, four, five... I lost count."},
		place:    "on the bookshelf",
	},
	{
		activity: "packing to move",
		settings: []string{"half-empty apartment", "garage", "bedroom"},
		tasks:    []func(*rand.Rand, *cast) task{countTask("boxes", "in the truck"), deliveryTask("the new mattress"), codeTask("storage unit code", true), costTask("the moving boxes", "boxes")},
		chores:   []string{"hand me the tape", "label this one kitchen stuff", "hold the door open", "carry the lamp down", "wrap the glasses in newspaper"},
		remarks:  []string{"you packed the scissors again", "that box is way too heavy", "be careful with the mirror", "your mom called about the couch"},
		self:     []string{"Why do I own so many cables?", "Okay, this is the last box for the closet.", "Where did all this dust come from?", "I'm never moving again."},
		place:    "on the windowsill",
	},
	{
		activity: "studying for exams",
		settings: []string{"library study room", "dorm room", "kitchen table"},
		tasks:    []func(*rand.Rand, *cast) task{examTask, codeTask("study room code", true), costTask("the practice books", "books")},
		chores:   []string{"pass the highlighter", "quiz me on chapter four", "turn the music down a bit", "lend me your charger", "read that definition out loud"},
		remarks:  []string{"you've read that page five times", "your notes are way better than mine", "you should take a break", "I think you skipped a step there"},
		self:     []string{"Okay, mitochondria, then the Krebs cycle...", "I don't get this at all.", "Wait, which formula was that?", "My brain is completely full."},
		place:    "on the desk",
	},
	{
		activity: "planning a birthday party",
		settings: []string{"backyard", "living room", "office break room"},
		tasks:    []func(*rand.Rand, *cast) task{costTask("the cupcakes", "cupcakes"), countTask("chairs", "from the garage"), recipeTask, deliveryTask("the banner")},
		chores:   []string{"blow up a few balloons", "write down the guest list", "tape the banner up", "ask the neighbors about parking", "order the candles"},
		remarks:  []string{"she's going to love this", "you can't tell her anything", "the balloons are too close to the grill", "your handwriting is terrible"},
		self:     []string{"Plates, cups, napkins... forks!", "I hope it doesn't rain.", "How do people do this every year?", "Hmm, blue or gold streamers."},
		place:    "on the table",
	},
	{
		activity: "on a road trip",
		settings: []string{"car", "minivan"},
		tasks:    []func(*rand.Rand, *cast) task{driveTask, arriveTask, splitTask("the gas", "for this tank"), nameTask("motel")},
		chores:   []string{"pass me the water", "find a gas station on your phone", "change the song", "open the window a bit", "hand me my sunglasses"},
		remarks:  []string{"you missed the exit", "stop kicking my seat", "you're doing great, keep going", "slow down a little"},
		self:     []string{"I can't feel my legs anymore.", "Are those cows? Those are cows.", "I should have gone before we left.", "Hmm, the tank's getting low."},
		place:    "on the dashboard",
		commands: []string{"navigate to the nearest gas station.", "call Mom.", "play the road trip playlist.", "how far is the next rest stop?", "turn the volume down a little."},
	},
}

var n1Lines = []string{
	"Aria reminded me about this whole thing yesterday, actually.",
	"Honestly, Aria knows my schedule better than I do.",
	"We really should have set up Aria ages ago.",
	"My dad still says thank you to Aria every single time.",
	"I bet Aria's heard us argue about this a hundred times.",
	"Remember when Aria played that song at full volume at midnight?",
	"I told my sister about Aria and now she wants one too.",
	"Aria's been really good with the reminders lately.",
}

var deviceCommands = []string{
	"set a timer for {n} minutes.", "turn the volume down a little.", "what's the weather tomorrow?",
	"add paper towels to my shopping list.", "turn off the hallway light.", "play something upbeat.",
	"remind me to call the landlord at five.", "how long is my commute right now?",
}

var replies = []string{
	"Yeah, one sec.", "Sure, hang on.", "Already on it.", "Can it wait five minutes?", "Okay, okay, I'm doing it.", "Fine, but you owe me.",
}

type fact struct{ q, a string }

var n4Questions = []fact{
	{"how many ounces are in a cup?", "eight"},
	{"what's the capital of Australia?", "Canberra"},
	{"how many teaspoons are in a tablespoon?", "three"},
	{"what year did the first iPhone come out?", "two thousand seven"},
	{"how many feet are in a mile?", "five thousand two hundred eighty"},
	{"what's the boiling point of water in Fahrenheit?", "two hundred twelve"},
	{"who wrote Pride and Prejudice?", "Jane Austen"},
	{"how many players are on a soccer team?", "eleven"},
	{"what's the tallest mountain in Africa?", "Kilimanjaro"},
	{"how many centimeters are in an inch?", "about two and a half"},
}

var byAsker = []string{
	"Oh wait, never mind, it's {a}. I remember now.",
	"Actually, forget it, I just looked it up. It's {a}.",
	"Never mind, it's {a}, obviously.",
}

var byOther = []string{
	"It's {a}.",
	"{X}, it's {a}, everybody knows that.",
	"Don't bother, it's {a}.",
	"I've got it, it's {a}.",
}

// --- filler units -----------------------------------------------------------------

func (c *cast) n2HumanUnit() unit {
	return unit{size: 2, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		y := c.pickSpeaker(rng, x)
		chore := c.fresh(rng, c.scene.chores)
		c.add(line{speaker: x, text: c.withOpener(rng, c.names[y]+", can you "+chore+"?"), label: protocol.LabelN2, addressee: protocol.AddresseeHuman})
		c.add(line{speaker: y, text: c.fresh(rng, replies), label: protocol.LabelN2, addressee: protocol.AddresseeHuman})
	}}
}

func (c *cast) n2HumanOneLiner() unit {
	return unit{size: 1, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		y := c.pickSpeaker(rng, x)
		c.add(line{speaker: x, text: c.names[y] + ", " + c.fresh(rng, c.scene.remarks) + ".", label: protocol.LabelN2, addressee: protocol.AddresseeHuman})
	}}
}

func (c *cast) n2DeviceUnit() unit {
	return unit{size: 1, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		pool := deviceCommands
		if c.scene.commands != nil {
			pool = c.scene.commands
		}
		cmd := fill(c.fresh(rng, pool), "{n}", fmt.Sprint(5+5*rng.IntN(4)))
		c.add(line{speaker: x, text: pick(rng, c.wake) + ", " + cmd, label: protocol.LabelN2, addressee: protocol.AddresseeDevice})
	}}
}

func (c *cast) n3Unit() unit {
	return unit{size: 1, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		c.add(line{speaker: x, text: c.fresh(rng, c.scene.self), label: protocol.LabelN3})
	}}
}

func (c *cast) n1Unit() unit {
	return unit{size: 1, label: protocol.LabelN1, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		c.add(line{speaker: x, text: c.fresh(rng, n1Lines), label: protocol.LabelN1})
	}}
}

// n4Unit is a question to Aria that a human resolves: the asker half the time, someone
// else the other half.
func (c *cast) n4Unit() unit {
	return unit{size: 2, render: func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		var q fact
		for k := 0; k < len(n4Questions); k++ {
			q = n4Questions[rng.IntN(len(n4Questions))]
			if !c.usedIdx["n4:"+q.q] {
				break
			}
		}
		c.usedIdx["n4:"+q.q] = true
		ask := pick(rng, []string{"Aria, ", "Hey Aria, ", "Aria, quick question, "})
		c.add(line{speaker: x, text: ask + q.q, label: protocol.LabelN4Q})
		if rng.IntN(2) == 0 {
			c.add(line{speaker: x, text: fill(pick(rng, byAsker), "{a}", q.a), label: protocol.LabelN4R})
			return
		}
		y := c.pickSpeaker(rng, x)
		c.add(line{speaker: y, text: fill(pick(rng, byOther), "{a}", q.a, "{X}", c.names[x]), label: protocol.LabelN4R})
	}}
}

// --- tasks: facts stated in the conversation, then the T request that needs them ---

type task struct {
	facts []func(*rand.Rand, *cast) // each renders exactly one turn, in order
	preT  func(*rand.Rand, *cast)   // the rewritten turn before T, or nil
	t     func(*rand.Rand, *cast)
	gold  string
}

// factTo is a fact said to a named person (N2, human).
func factTo(tmpl string, kv ...string) func(*rand.Rand, *cast) {
	return func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		y := c.pickSpeaker(rng, x)
		c.add(line{speaker: x, text: fill(tmpl, append(kv, "{Y}", c.names[y])...), label: protocol.LabelN2, addressee: protocol.AddresseeHuman})
	}
}

// factAloud is a fact said to nobody in particular (N3).
func factAloud(tmpl string, kv ...string) func(*rand.Rand, *cast) {
	return func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		c.add(line{speaker: x, text: fill(tmpl, kv...), label: protocol.LabelN3})
	}
}

// request builds the T turn and, for some cue styles, the rewritten turn before it.
// req is a lower-case question such as "what time do we have to leave?".
func request(rng *rand.Rand, t *task, req string) {
	style := rng.IntN(5)
	if style == 4 {
		// The cue lives in the turn before T: someone proposes asking the assistant.
		cue := pick(rng, []struct{ e, i string }{
			{"Let's just ask Aria, she's been listening this whole time.", "Let's just ask the assistant, it's been listening this whole time."},
			{"Aria heard all of that, she'll know.", "The speaker heard all of that, it'll know."},
			{"Honestly, Aria was here for all of it, she'll remember.", "Honestly, the assistant was here for all of it, it'll remember."},
		})
		t.preT = func(rng *rand.Rand, c *cast) {
			x := c.pickSpeaker(rng, c.prev())
			c.add(line{speaker: x, text: cue.e, implicit: cue.i, label: protocol.LabelN1})
		}
		t.t = func(rng *rand.Rand, c *cast) {
			x := c.pickSpeaker(rng, c.prev())
			c.add(line{speaker: x, text: "Okay Aria, " + req, implicit: "Okay then, " + req, label: protocol.LabelT})
		}
		return
	}
	t.t = func(rng *rand.Rand, c *cast) {
		x := c.pickSpeaker(rng, c.prev())
		var ex string
		switch rng.IntN(3) {
		case 0:
			ex = "Aria, " + req
		case 1:
			ex = "Hey Aria, " + req
		default:
			ex = capFirst(strings.TrimSuffix(req, "?")) + ", Aria?"
		}
		var im string
		switch style {
		case 0:
			im = pick(rng, []string{"You've been listening to all of this, so ", "You heard all that, right? So ", "Since you're listening anyway, "}) + req
		case 1:
			im = pick(rng, []string{"Okay, you " + c.scene.place + ", ", "Hey, you over there " + c.scene.place + ", "}) + req
		case 2:
			im = pick(rng, []string{"Question for the assistant: ", "This one's for the assistant: "}) + req
		default:
			im = capFirst(strings.TrimSuffix(req, "?")) + "? " + pick(rng, []string{"You keep track of this stuff for us.", "You were listening, you tell us."})
		}
		// The register's opener goes where it does not stack on another interjection.
		if o := c.opener(rng); o != "" {
			if !strings.HasPrefix(ex, "Hey ") {
				ex = o + lowerFirst(ex)
			}
			if style == 3 {
				im = o + lowerFirst(im)
			}
		}
		c.add(line{speaker: x, text: ex, implicit: im, label: protocol.LabelT})
	}
}

func clock(mins int) string {
	h, m := (mins/60)%12, mins%60
	if h == 0 {
		h = 12
	}
	return fmt.Sprintf("%d:%02d", h, m)
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}

func leaveTask(event, where string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		start := 17*60 + 5*rng.IntN(48) // 5:00 to 8:55
		travel := 15 + 5*rng.IntN(7)
		t := task{gold: clock(start - travel), facts: []func(*rand.Rand, *cast){
			factTo("{Y}, I just checked, " + event + " is at " + clock(start) + "."),
			factAloud(pick(rng, []string{"And it's about {m} minutes to " + where + " from here.", "Getting to " + where + " takes like {m} minutes with traffic."}), "{m}", fmt.Sprint(travel)),
		}}
		request(rng, &t, "what time do we have to leave to get there right on time?")
		return t
	}
}

func ovenTask(rng *rand.Rand, c *cast) task {
	dish := pick(rng, []string{"the lasagna", "the bread", "the chicken", "the brownies", "the pie"})
	in := 17*60 + 5*rng.IntN(36)
	cook := 20 + 5*rng.IntN(8)
	t := task{gold: clock(in + cook), facts: []func(*rand.Rand, *cast){
		factAloud("Okay, " + dish + " went in at " + clock(in) + "."),
		factTo("{Y}, the recipe says {m} minutes, so don't let me forget it.", "{m}", fmt.Sprint(cook)),
	}}
	request(rng, &t, "when does "+dish+" need to come out?")
	return t
}

func recipeTask(rng *rand.Rand, c *cast) task {
	ing := pick(rng, []struct{ name, unit string }{{"eggs", ""}, {"flour", "cups of "}, {"rice", "cups of "}, {"onions", ""}, {"lemons", ""}})
	q := 2 + rng.IntN(3)
	serv := pick(rng, []int{2, 4})
	mult := 2 + rng.IntN(2)
	t := task{gold: fmt.Sprintf("%d %s%s", q*mult, ing.unit, ing.name), facts: []func(*rand.Rand, *cast){
		factAloud(fmt.Sprintf("The recipe says %s %s%s for %s people.", numberWords[q], ing.unit, ing.name, numberWords[serv])),
		factTo(fmt.Sprintf("{Y}, remember we're making enough for %s people this time.", numberWords[serv*mult])),
	}}
	if ing.unit == "" {
		request(rng, &t, "how many "+ing.name+" do we need then?")
	} else {
		request(rng, &t, "how many cups of "+ing.name+" do we need then?")
	}
	return t
}

func costTask(what, items string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		price := pick(rng, []int{3, 4, 6, 7, 8, 12, 15})
		k := 4 + rng.IntN(9)
		t := task{gold: fmt.Sprintf("%d dollars", price*k), facts: []func(*rand.Rand, *cast){
			factTo("{Y}, "+what+" are {p} dollars each.", "{p}", fmt.Sprint(price)),
			factAloud(pick(rng, []string{"We need {k} of them, I counted.", "So that's {k} " + items + ", right? Yeah, {k}."}), "{k}", fmt.Sprint(k)),
		}}
		request(rng, &t, "how much will "+what+" cost in total?")
		return t
	}
}

func splitTask(what, detail string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		per := 9 + rng.IntN(16)
		total := per * c.n
		t := task{gold: fmt.Sprintf("%d dollars each", per), facts: []func(*rand.Rand, *cast){
			factTo("{Y}, "+what+" came to {b} dollars "+detail+".", "{b}", fmt.Sprint(total)),
			factAloud("I'll pay now and everybody pays me back. All " + numberWords[c.n] + " of us."),
		}}
		request(rng, &t, "how much does each of us owe if we split it evenly?")
		return t
	}
}

func codeTask(thing string, digits bool) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		var val string
		if digits {
			d := rng.Perm(10)[:4]
			val = fmt.Sprintf("%d %d %d %d", d[0], d[1], d[2], d[3])
		} else {
			val = fmt.Sprintf("%s %d", pick(rng, []string{"maple", "river", "orange", "falcon", "pepper", "summer"}), 10+rng.IntN(90))
		}
		t := task{gold: val, facts: []func(*rand.Rand, *cast){
			factTo("{Y}, the " + thing + " is " + val + ". Write it down somewhere."),
			factAloud(pick(rng, []string{"I'm never going to remember that.", "Who picks these things, honestly."})),
		}}
		request(rng, &t, "what was the "+thing+" again?")
		return t
	}
}

func countTask(items, where string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		a, b := 3+rng.IntN(9), 2+rng.IntN(9)
		t := task{gold: fmt.Sprintf("%d %s", a+b, items), facts: []func(*rand.Rand, *cast){
			factTo("{Y}, I've got {a} "+items+" here already.", "{a}", fmt.Sprint(a)),
			factAloud("And there are {b} more "+where+". I counted.", "{b}", fmt.Sprint(b)),
		}}
		request(rng, &t, "how many "+items+" is that altogether?")
		return t
	}
}

var weekdays = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func deliveryTask(what string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		d := rng.IntN(7)
		k := 2 + rng.IntN(4)
		t := task{gold: weekdays[(d+k)%7], facts: []func(*rand.Rand, *cast){
			factAloud("The tracking page says " + what + " shipped on " + weekdays[d] + "."),
			factTo("{Y}, they said delivery takes {k} days, weekend included.", "{k}", numberWords[k]),
		}}
		request(rng, &t, "which day should "+what+" show up?")
		return t
	}
}

func examTask(rng *rand.Rand, c *cast) task {
	subject := pick(rng, []string{"chemistry", "statistics", "history", "biology", "economics"})
	today := 3 + rng.IntN(12)
	left := 2 + rng.IntN(10)
	t := task{gold: fmt.Sprintf("%d days", left), facts: []func(*rand.Rand, *cast){
		factTo("{Y}, the "+subject+" exam got moved to the {e}th.", "{e}", fmt.Sprint(today+left)),
		factAloud("And today's the {d}th. Great.", "{d}", fmt.Sprint(today)),
	}}
	request(rng, &t, "how many days do we have left until the exam?")
	return t
}

func driveTask(rng *rand.Rand, c *cast) task {
	speed := pick(rng, []int{50, 60})
	hours := 2 + rng.IntN(4)
	place := pick(rng, []string{"the lake", "Grandma's", "the coast", "the cabin", "the city"})
	t := task{gold: fmt.Sprintf("%d hours", hours), facts: []func(*rand.Rand, *cast){
		factAloud(fmt.Sprintf("It's %d miles to %s.", speed*hours, place)),
		factTo("{Y}, if we keep it at {v} the whole way we'll be fine.", "{v}", fmt.Sprint(speed)),
	}}
	request(rng, &t, "how long will the drive take at that speed?")
	return t
}

func arriveTask(rng *rand.Rand, c *cast) task {
	now := 12*60 + 5*rng.IntN(60)
	left := 40 + 5*rng.IntN(20)
	t := task{gold: clock(now + left), facts: []func(*rand.Rand, *cast){
		factAloud("It's " + clock(now) + " now, by the car clock."),
		factTo("{Y}, the map says {m} more minutes.", "{m}", fmt.Sprint(left)),
	}}
	request(rng, &t, "what time will we get there?")
	return t
}

func nameTask(kind string) func(*rand.Rand, *cast) task {
	return func(rng *rand.Rand, c *cast) task {
		name := pick(rng, []string{"Lucia's", "The Blue Door", "Harbor House", "Golden Pine", "Casa Rosa", "The Copper Kettle"})
		street := pick(rng, []string{"Pine Street", "Fifth Avenue", "Lake Road", "Market Street"})
		t := task{gold: name, facts: []func(*rand.Rand, *cast){
			factTo("{Y}, the " + kind + " is called " + name + ", on " + street + "."),
			factAloud(pick(rng, []string{"I'll never remember that name.", "Everything around there sounds the same."})),
		}}
		request(rng, &t, "what was the name of the "+kind+" again?")
		return t
	}
}
