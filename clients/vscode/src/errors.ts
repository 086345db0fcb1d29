// The one error type the extension's API rejects with. Agent extensions cannot `instanceof` a class
// of another extension's bundle, so what they test is plain data: `name === 'MimoSidecarError'`
// and `reason`, which is either the sidecar's error name (protocol.md "Errors": `SessionNotFound`,
// `InvalidParams`, `RevisionConflict`…, with its `code` and `data`) or one of the extension's own:
//
//   SessionLost         the session was open in a sidecar process that has since exited, and no
//                       `restore` was given to reopen it: call `sessionOpen` again (protocol.md
//                       "After a restart") or give `restore`;
//   SidecarExited       the process exited while this request was in flight; nothing says whether
//                       it was applied (the sidecar's state is gone either way);
//   SidecarUnavailable  no sidecar can run: none was found, `initialize` was refused, or it exited
//                       more often than `mimoSidecar.maxRestarts` allows (the message says which);
//   Timeout             no answer in the client's time (`SidecarTimeout`); the request was cancelled;
//   Cancelled           the caller's token cancelled it (the sidecar's -32800 RequestCancelled).

import { ErrorCodes, isSidecarError, SidecarTimeout } from 'mimo-sidecar-client';
import type { ErrorReason } from './api.js';

export class MimoSidecarError extends Error {
  override readonly name = 'MimoSidecarError';

  constructor(
    message: string,
    readonly reason: ErrorReason,
    readonly method: string,
    readonly sessionId?: string,
    /** The sidecar's JSON-RPC error code, when the sidecar answered the error. */
    readonly code?: number,
    /** The sidecar's `data` (`name`, `field`, `errors`…), when it answered the error. */
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The field the sidecar named (`data.field`), when one input was at fault. */
  get field(): string | undefined {
    return typeof this.data?.field === 'string' ? this.data.field : undefined;
  }
}

/** -32800: LSP's RequestCancelled, which vscode-jsonrpc has no constant for. */
const REQUEST_CANCELLED = -32800;

/** vscode-jsonrpc's own codes for a request the closed connection will never answer. */
const CONNECTION_GONE = new Set<number>([ErrorCodes.PendingResponseRejected, ErrorCodes.ConnectionInactive]);

/**
 * What the API rejects with for an error of the typed client. `exited` says whether the process
 * that took the request is gone (then every failure is `SidecarExited`, whatever vscode-jsonrpc
 * made of the closed pipe).
 */
export function apiError(error: unknown, method: string, sessionId: string | undefined, exited: boolean): MimoSidecarError {
  if (error instanceof MimoSidecarError) return error;
  if (error instanceof SidecarTimeout) {
    return new MimoSidecarError(`${method}: ${error.message}; the request was cancelled on the sidecar`, 'Timeout', method, sessionId);
  }
  if (isSidecarError(error) && !exited) {
    const reason = error.data?.name ?? 'SidecarError';
    const why = error.code === REQUEST_CANCELLED ? 'Cancelled' : reason;
    return new MimoSidecarError(error.message, why, method, sessionId, error.code, error.data as Record<string, unknown>);
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (exited || (typeof code === 'number' && CONNECTION_GONE.has(code))) {
    return new MimoSidecarError(
      `${method}: the sidecar exited before it answered; whether the request was applied is unknown, and the state of its sessions is gone with the process`,
      'SidecarExited',
      method,
      sessionId,
    );
  }
  const text = error instanceof Error ? error.message : String(error);
  return new MimoSidecarError(`${method}: ${text}`, 'SidecarError', method, sessionId);
}
