import artifact from '../../data/bin-index.bin';
import { BinIndex } from './bin-index';

/**
 * The embedded BIN index, compiled by `npm run build:data` and bundled as a Data module.
 * Wrapping it only makes typed-array views, so doing it at module load costs microseconds
 * and fails the Worker loudly at start-up if the artifact is corrupt.
 */
export const BIN_INDEX = BinIndex.fromArrayBuffer(artifact);
