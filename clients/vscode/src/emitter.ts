// A minimal event emitter with `vscode.Event`'s shape, for the modules that do not import `vscode`
// (they run under plain Node in the unit tests). A listener that throws is reported, not allowed
// to stop the others.

import type { Disposable, Event } from './api.js';

export class Emitter<T> {
  private listeners: ((event: T) => unknown)[] = [];

  constructor(private readonly onListenerError: (error: unknown) => void = () => undefined) {}

  readonly event: Event<T> = (listener) => {
    this.listeners.push(listener);
    return {
      dispose: () => {
        this.listeners = this.listeners.filter((l) => l !== listener);
      },
    } satisfies Disposable;
  };

  fire(event: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  dispose(): void {
    this.listeners = [];
  }
}
