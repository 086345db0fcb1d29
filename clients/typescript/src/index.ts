// mimo-sidecar's TypeScript client: the wire types (generated), the method tables (generated) and
// the typed client over vscode-jsonrpc.
export * from './client.js';
// vscode-jsonrpc's own, re-exported so a host needs one copy: tokens to cancel with, error answers.
export { CancellationTokenSource, ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
export type { CancellationToken, Disposable, MessageConnection } from 'vscode-jsonrpc/node';
export type * from './methods.js';
export { CLIENT_METHODS, SIDECAR_METHODS } from './methods.js';
export type * from './protocol.js';
