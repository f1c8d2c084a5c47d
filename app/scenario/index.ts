// Public, framework-free API of the scenario subsystem (used by the console's recorder/replayer panel, the CLI
// and tests). Nothing here imports Node modules except cli.ts and schema-file.ts, which are not re-exported.
export { parseScenarioText, validateScenario, checkNames, type LoadError, type LoadResult } from './load.ts';
export {
  ScenarioRun, runScenario, canonical, syndromeName,
  type AsyncExecutor, type RunOptions, type ScenarioReport, type StepReport, type ScenarioInput,
} from './run.ts';
export { ScenarioRecorder, type RecorderOptions } from './record.ts';
export { exportC, cString, cComment, type ExportOptions } from './export-c.ts';
export { Sha256, sha256Hex } from './sha256.ts';
export {
  Scenario, Step, Expect, ScenarioHeader, scenarioJsonSchema, parseRef, REF_RE, SCENARIO_VERSION, SCENARIO_MAX_BYTES,
  SCENARIO_MAX_STEPS, type Ref,
} from '../protocol/scenario.ts';
