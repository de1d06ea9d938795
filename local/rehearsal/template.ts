/**
 * Reads a CloudFormation template as the rehearsal needs it: intrinsic
 * functions resolved against the local stand-ins (the dynalite table, the
 * in-memory queues, the function hosts). Resolution is lazy and strict: only
 * what a served resource uses is resolved, and anything this resolver does
 * not know (an intrinsic, a GetAtt attribute, a resource type behind a Ref)
 * throws an error naming the resource and the property, never a guess.
 */
import { ACCOUNT, REGION } from './iam.js';

// `any`: CloudFormation JSON is free-form; every read goes through the helpers below.
export type Json = any;

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, Json>;
}

export class TemplateError extends Error {
  constructor(where: string, message: string) {
    super(`template: ${where}: ${message}`);
    this.name = 'TemplateError';
  }
}

/** Local names of the stand-ins for each kind of resource a Ref or GetAtt may point at. */
export interface LocalNames {
  readonly queueUrl: (logicalId: string) => string;
}

export class Template {
  readonly resources: Record<string, CfnResource>;
  private readonly parameters: Record<string, { Default?: Json }>;

  constructor(
    json: Json,
    readonly stackName: string,
    private readonly names: LocalNames,
  ) {
    this.resources = json.Resources ?? {};
    this.parameters = json.Parameters ?? {};
  }

  ofType(type: string): [string, CfnResource][] {
    return Object.entries(this.resources).filter(([, r]) => r.Type === type);
  }

  resource(id: string, where: string): CfnResource {
    const r = this.resources[id];
    if (!r) throw new TemplateError(where, `no resource ${id}`);
    return r;
  }

  /** The physical name the rehearsal gives a resource: its logical id (unique in the stack). */
  ref(id: string, where: string): string {
    if (id === 'AWS::Region') return REGION;
    if (id === 'AWS::AccountId') return ACCOUNT;
    if (id === 'AWS::Partition') return 'aws';
    if (id === 'AWS::URLSuffix') return 'amazonaws.com';
    if (id === 'AWS::StackName') return this.stackName;
    const param = this.parameters[id];
    if (param) {
      if (param.Default === undefined) throw new TemplateError(where, `parameter ${id} has no default`);
      return String(param.Default);
    }
    const r = this.resource(id, where);
    if (r.Type === 'AWS::SQS::Queue') return this.names.queueUrl(id);
    if (r.Type === 'AWS::SecretsManager::Secret') return Template.secretArn(id);
    // A stage's Ref is its name (the execute-api URL's path segment), as CloudFormation gives it.
    if (r.Type === 'AWS::ApiGateway::Stage') return String(this.prop(id, 'StageName', where));
    return id;
  }

  getAtt(id: string, attribute: string, where: string): string {
    const r = this.resource(id, where);
    const key = `${r.Type}.${attribute}`;
    switch (key) {
      case 'AWS::DynamoDB::GlobalTable.Arn':
      case 'AWS::DynamoDB::Table.Arn':
        return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${id}`;
      case 'AWS::DynamoDB::GlobalTable.StreamArn':
      case 'AWS::DynamoDB::Table.StreamArn':
        return Template.streamArn(id);
      case 'AWS::KMS::Key.Arn':
        return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;
      case 'AWS::SQS::Queue.Arn':
        return `arn:aws:sqs:${REGION}:${ACCOUNT}:${id}`;
      case 'AWS::SQS::Queue.QueueName':
        return id;
      case 'AWS::SQS::Queue.QueueUrl':
        return this.names.queueUrl(id);
      case 'AWS::Lambda::Function.Arn':
        return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${id}`;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${id}:*`;
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${ACCOUNT}:role/${id}`;
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return `${id}/root`;
      case 'AWS::ApiGateway::DomainName.DomainNameArn':
        return `arn:aws:apigateway:${REGION}::/domainnames/${id}`;
      case 'AWS::S3::Bucket.Arn':
        return `arn:aws:s3:::${id}`;
      case 'AWS::S3::Bucket.RegionalDomainName':
        return `${id}.s3.${REGION}.amazonaws.com`;
      case 'AWS::CloudFront::Distribution.DomainName':
        return Template.distributionDomain(id);
      case 'AWS::CloudFront::OriginAccessControl.Id':
        return id;
      default:
        throw new TemplateError(where, `cannot resolve Fn::GetAtt ${id}.${attribute} (${r.Type})`);
    }
  }

  /** A table's stream ARN as DynamoDB gives it: the table's, then the stream's label (its creation time; here fixed). */
  static streamArn(tableId: string): string {
    return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${tableId}/stream/2026-01-01T00:00:00.000`;
  }

  /** A distribution's `*.cloudfront.net` name in the rehearsal (the local port stands for it). */
  static distributionDomain(id: string): string {
    return `${id.toLowerCase()}.cloudfront.net`;
  }

  /** A secret's ARN as Secrets Manager gives it: its name, then a dash and six random characters (here fixed). */
  static secretArn(id: string): string {
    return `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id}-Rh3a5l`;
  }

  /** Resolves every intrinsic in a value; `where` names the resource and property for errors. */
  resolve(value: Json, where: string): Json {
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${where}[${i}]`));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'))) return this.intrinsic(keys[0]!, value[keys[0]!], where);
    return Object.fromEntries(keys.map((k) => [k, this.resolve(value[k], `${where}.${k}`)]));
  }

  private intrinsic(name: string, arg: Json, where: string): Json {
    switch (name) {
      case 'Ref':
        return this.ref(String(arg), where);
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(arg) ? arg : String(arg).split('.');
        return this.getAtt(String(id), String(attribute), where);
      }
      case 'Fn::Join': {
        const [sep, parts] = arg as [string, Json[]];
        return (this.resolve(parts, where) as Json[]).map(String).join(sep);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [Json, Json];
        const items = this.resolve(list, where) as Json[];
        const i = Number(this.resolve(index, where));
        if (!Array.isArray(items) || items[i] === undefined) throw new TemplateError(where, `Fn::Select index ${i} out of range`);
        return items[i];
      }
      case 'Fn::Split': {
        const [sep, source] = arg as [string, Json];
        return String(this.resolve(source, where)).split(sep);
      }
      case 'Fn::Sub': {
        const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, Json>]) : [String(arg), {}];
        return text.replace(/\$\{([^}!]+)\}/g, (_m, ref: string) => {
          if (ref in vars) return String(this.resolve(vars[ref], where));
          const [id, attribute] = ref.split('.');
          return attribute ? this.getAtt(id!, attribute, where) : this.ref(id!, where);
        });
      }
      default:
        throw new TemplateError(where, `cannot resolve ${name}`);
    }
  }

  /** A resource's property, resolved. */
  prop(id: string, path: string, where = `${id}.${path}`): Json {
    let v: Json = this.resource(id, where).Properties;
    for (const k of path.split('.')) v = v?.[k];
    return this.resolve(v, where);
  }

  /** The logical id behind `{ Ref: X }` / `{ Fn::GetAtt: [X, …] }` without resolving it. */
  static targetOf(value: Json): string | undefined {
    if (value?.Ref) return String(value.Ref);
    if (value?.['Fn::GetAtt']) return String([value['Fn::GetAtt']].flat()[0]).split('.')[0];
    return undefined;
  }

  /** The function a Lambda integration or authorizer URI invokes: the one GetAtt …Arn inside it. */
  static functionIn(value: Json, template: Template, where: string): string {
    const found = new Set<string>();
    const walk = (v: Json) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        const target = Template.targetOf(v);
        if (target && template.resources[target]?.Type === 'AWS::Lambda::Function') found.add(target);
        else Object.values(v).forEach(walk);
      }
    };
    walk(value);
    if (found.size !== 1) throw new TemplateError(where, `expected one Lambda function in the integration URI, found ${found.size}`);
    return [...found][0]!;
  }
}
