// Lab 3, BMME / iWARP: its manifest. The lab is its lab.json and scenarios; it adds no command, panel or agent.
import { defineLab } from '../../app/protocol/lab-manifest.ts';

export default defineLab({ id: 'bmme', e2e: 'e2e/labs.spec.ts' });
