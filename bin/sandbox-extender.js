#!/usr/bin/env node
// Entry point of the `sandbox-extender` command: runs the compiled CLI (npm run build first).
import '../dist/src/cli/main.js';
