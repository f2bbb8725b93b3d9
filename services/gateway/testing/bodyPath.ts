// The steps of the gateway's body path, for bench/b2-steps.ts to time one by one.
export { anyInexactToken, inexactNumbers, mayHoldInexactNumbers, RISKY_TOKEN, unstorableText } from '../src/edge/body.ts';
