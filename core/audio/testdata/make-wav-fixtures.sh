#!/usr/bin/env bash
# Regenerates wav/: one 50 ms 16 kHz signal (440 Hz sine, amplitude 0.5) in every encoding
# the reader must accept, plus encodings it must reject. Made with SoX v14.4.2; run by hand.
set -euo pipefail
cd "$(dirname "$0")/wav"
sox -D -n -r 16000 -e float -b 32 -c 1 f32.wav synth 0.05 sine 440 vol 0.5
sox -D f32.wav -e unsigned -b 8 u8.wav
sox -D f32.wav -e signed -b 16 s16.wav
sox -D f32.wav -e signed -b 24 s24.wav
sox -D f32.wav -e signed -b 32 s32.wav
# Left is the signal, right is silence: the mono average is half the signal.
sox -D -M f32.wav "|sox -n -r 16000 -e float -b 32 -c 1 -p trim 0 0.05" -e signed -b 16 stereo_s16.wav
sox -D f32.wav -e float -b 64 f64.wav
sox -D f32.wav -e a-law a_law.wav
sox -D f32.wav -e ima-adpcm adpcm.wav
