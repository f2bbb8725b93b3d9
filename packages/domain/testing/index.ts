export { validOrderRow } from './orderRow.ts';
