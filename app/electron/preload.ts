// Preload (sandboxed): one narrow bridge, window.verbslab.connect(). The two MessagePorts it asks for
// (backend host; main-process control/status) arrive from the main process and are handed to the page as a
// window message {type:'verbslab:ports'} (contextBridge cannot carry MessagePorts).
import { contextBridge, ipcRenderer } from 'electron';

ipcRenderer.on('verbslab:ports', (e) => {
  if (e.ports.length !== 2) return;
  window.postMessage({ type: 'verbslab:ports' }, window.location.origin, [...e.ports]);
});

contextBridge.exposeInMainWorld('verbslab', {
  connect: (): void => ipcRenderer.send('verbslab:connect'),
});
