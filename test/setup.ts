// vitest runs without globals; PluginTester registers its cases through these.
import { describe, it } from 'vitest'
import { PluginTester } from '../src/engine/plugin-tester.js'

PluginTester.describe = describe
PluginTester.it = it
