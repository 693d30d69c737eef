/** The DOM helpers live in leasehold/inspector, whose views the demo is built on. */
export { h, icon, setAttr, setIcon, setText, svg } from 'leasehold/inspector';
export type { Props } from 'leasehold/inspector';
