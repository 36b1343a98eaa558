// The stream suite with the gateway process writing to every client itself (WS_WORKERS=0, the default).
import { hubSuite } from './hub-suite.js';

hubSuite({ WS_WORKERS: '0' });
