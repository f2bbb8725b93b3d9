// `node bench/profile-summary.ts <file.cpuprofile>`: categories and the functions with the most self
// time of a V8 CPU profile (e.g. one written with BENCH_B6_CPU_PROF_DIR).
import { readFileSync } from 'node:fs';
import { summarizeProfile } from './lib/cpuProfile.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile>');
console.log(JSON.stringify(summarizeProfile(JSON.parse(readFileSync(file, 'utf8'))), null, 2));
