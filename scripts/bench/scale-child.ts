/** One timed layered build in a process of its own (scripts/bench/scale.ts); prints JSON. */
import { childBuild } from './scale';

const [dataDir, file] = process.argv.slice(2);
console.log(JSON.stringify(await childBuild(dataDir!, file!)));
