#!/usr/bin/env bash
# Regenerates the resampler reference files in sox/ (run by hand; tests never call sox).
# Made with SoX v14.4.2 (Debian), whose `rate` effect at its default quality (-h, linear
# phase, 95% bandwidth) is the reference:
#   tones_<from>.wav        0.2 s of 300 + 1234 + 3000 + 5500 Hz sines, 32-bit float
#   tones_<from>_<to>.wav   the same resampled by sox to <to> Hz, 32-bit float
#   alias_48000.wav         0.2 s of an 11 kHz sine at 48 kHz (above 16 kHz's Nyquist)
#   alias_48000_16000.wav   sox's 16 kHz version of it (the tone must vanish)
set -euo pipefail
cd "$(dirname "$0")/sox"
rates=(16000 22050 24000 44100 48000)
for from in "${rates[@]}"; do
  sox -D -n -r "$from" -e float -b 32 -c 1 "tones_$from.wav" synth 0.2 sine 300 sine 1234 sine 3000 sine 5500 remix - vol 0.8
  for to in "${rates[@]}"; do
    [ "$from" = "$to" ] && continue
    sox -D "tones_$from.wav" -e float -b 32 "tones_${from}_$to.wav" rate "$to"
  done
done
sox -D -n -r 48000 -e float -b 32 -c 1 alias_48000.wav synth 0.2 sine 11000 vol 0.5
sox -D alias_48000.wav -e float -b 32 alias_48000_16000.wav rate 16000
