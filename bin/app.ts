#!/usr/bin/env node
/**
 * CDK app: `npx cdk synth -c stage=staging|production [-c serviceName=…]
 * [-c userEventsVariant=typed|dated] [-c siteUrl=…] [-c embedCacheMaxAge=…]
 * [-c domainName=… -c certificateArn=…] [-c alarmTopicArn=… | -c alarmEmail=…]
 * [-c embedCdn=…] [-c publicWaf=…] [-c quotaHeaders=static|context] …`;
 * every key and its default: lib/stack-config.ts and docs/deploy.md.
 * Synthesizes offline with no AWS account; cdk-nag runs on every synth.
 */
import { App } from 'aws-cdk-lib';
import { buildApp } from '../lib/app.js';

buildApp(new App());
