#!/usr/bin/env bash
# Regenerates the test audio (run by hand; needs flite and sox, made with flite 2.2 and
# SoX v14.4.2). All mono 16-bit.
#   conversation_16k.wav  15 s at 16 kHz: silence, two flite voices separated by a short
#                         pause (to be merged) and a long one, white noise, a 440 Hz tone,
#                         and a third voice.
#   speech_24k.wav / speech_44k.wav   its first 6 s, upsampled by sox to 24 / 44.1 kHz
#   speech_24k_sox16k.wav / speech_44k_sox16k.wav   those converted back to 16 kHz by sox
set -euo pipefail
cd "$(dirname "$0")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
say() { flite -voice "$1" -t "$2" -o "$tmp/raw.wav" && sox -D "$tmp/raw.wav" -r 16000 -c 1 -e signed -b 16 "$3"; }
sil() { sox -D -n -r 16000 -c 1 -e signed -b 16 "$2" trim 0 "$1"; }
say slt "Aria, what is the weather going to be like in Paris tomorrow?" "$tmp/a.wav"
say awb "Never mind, I will look it up myself." "$tmp/b.wav"
say rms "Thanks anyway." "$tmp/c.wav"
sil 0.7 "$tmp/s1.wav"; sil 0.4 "$tmp/s2.wav"; sil 1.5 "$tmp/s3.wav"; sil 0.5 "$tmp/s4.wav"
sox -D -n -r 16000 -c 1 -e signed -b 16 "$tmp/noise.wav" synth 1.0 whitenoise vol 0.05
sox -D -n -r 16000 -c 1 -e signed -b 16 "$tmp/tone.wav" synth 1.0 sine 440 vol 0.3
sox -D "$tmp/s1.wav" "$tmp/a.wav" "$tmp/s2.wav" "$tmp/b.wav" "$tmp/s3.wav" "$tmp/noise.wav" \
  "$tmp/s4.wav" "$tmp/tone.wav" "$tmp/s4.wav" "$tmp/c.wav" "$tmp/s3.wav" conversation_16k.wav
sox -D conversation_16k.wav -r 24000 speech_24k.wav trim 0 6
sox -D conversation_16k.wav -r 44100 speech_44k.wav trim 0 6
sox -D speech_24k.wav -r 16000 speech_24k_sox16k.wav
sox -D speech_44k.wav -r 16000 speech_44k_sox16k.wav
