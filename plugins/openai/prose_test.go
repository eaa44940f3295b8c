package main

import "context"

type proseKey struct{}

func withProse(ctx context.Context) context.Context { return context.WithValue(ctx, proseKey{}, true) }
func isProse(ctx context.Context) bool            { v, _ := ctx.Value(proseKey{}).(bool); return v }
